#!/usr/bin/env node
// The `herald` command runs the compiled sources in dist/ (built by `npm run build`, which
// `npm install` runs through `prepare`) with plain node.
import { existsSync } from 'node:fs';
import module from 'node:module';

// Node 22.1 and later keep the compiled code of loaded modules on disk (NODE_COMPILE_CACHE, by
// default under the temporary directory): start-up to /health went from 698 to 605 ms on Node 24.
// NODE_DISABLE_COMPILE_CACHE=1 turns it off; Node 20 has no such cache.
module.enableCompileCache?.();

const entry = new URL('../dist/cli/run.js', import.meta.url);
if (!existsSync(entry)) {
  console.error('Herald is not built: dist/ is missing. Run `npm run build` (npm install runs it).');
  process.exit(1);
}
await import(entry.href);
