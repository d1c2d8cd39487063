#!/usr/bin/env node
// Runs Herald's TypeScript sources through tsx's loader, so there is no build step to forget.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2), process.env);
