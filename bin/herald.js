#!/usr/bin/env node
// The `herald` command runs the compiled sources in dist/ (built by `npm run build`, which
// `npm install` runs through `prepare`) with plain node.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/run.js', import.meta.url);
if (!existsSync(entry)) {
  console.error('Herald is not built: dist/ is missing. Run `npm run build` (npm install runs it).');
  process.exit(1);
}
await import(entry.href);
