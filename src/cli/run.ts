// The `herald` command: bin/herald.js loads the compiled form of this module (dist/cli/run.js);
// `npm run dev` runs it from the sources through tsx.
import { main } from './main.ts';

process.exitCode = await main(process.argv.slice(2), process.env);
