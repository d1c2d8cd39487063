// The entry of the dispatch thread (thread.ts). Worker threads do not inherit the tsx loader that
// bin/herald.js registers in the main thread, so this plain module registers it before loading
// the TypeScript thread body.
import { register } from 'tsx/esm/api';

register();
await import('./thread-entry.ts');
