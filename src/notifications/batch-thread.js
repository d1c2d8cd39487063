// The entry of a batch thread (batch-decoder.ts) when Herald runs from its TypeScript sources
// (tests, `npm run dev`): worker threads do not inherit the tsx loader, so this plain module
// registers it before loading the thread body. The build's compiled batch-thread.ts takes this
// file's place in dist/.
import { register } from 'tsx/esm/api';

register();
await import('./batch-thread.ts');
