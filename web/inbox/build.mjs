// Builds /inbox.js, the `<herald-inbox>` element (docs/inbox-element.md), into web/dist/ beside the UI,
// where the gateway serves it. One self-contained file: an IIFE (a classic <script src> and a
// module script both run it), minified, for the browsers of the last few years (ES2022: class
// fields, `??=`, `.at()`). Run by scripts/build.mjs after Vite (which empties web/dist first) and
// by the browser tests' ensureWebBuild.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));

export const INBOX_OUT = join(here, '..', 'dist', 'inbox.js');

export async function buildInbox(outfile = INBOX_OUT) {
  await build({
    entryPoints: [join(here, 'index.ts')],
    outfile,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2022', 'chrome111', 'firefox113', 'safari16.4'],
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'warning',
  });
}

// `node web/inbox/build.mjs`: the element alone (the browser tests' ensureWebBuild runs this).
if (process.argv[1] && fileURLToPath(import.meta.url) === join(process.argv[1])) await buildInbox();
