import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { sendNoRoute, sendProblem } from '../http/problem.ts';
import { climbs } from './paths.ts';

/** Where `vite build` writes the UI (web/dist, git-ignored). */
export const DEFAULT_WEB_ROOT = resolve(fileURLToPath(new URL('../../web/dist', import.meta.url)));

/** The `<herald-inbox>` element (web/inbox/, docs/inbox-element.md), built beside the UI and served as /inbox.js. */
export const INBOX_SCRIPT = 'inbox.js';

/**
 * Serves the built UI and /inbox.js. Hashed files under /assets/ are cached for good; index.html is always
 * revalidated so a new build is picked up at once. Any other GET (not an API path, not a file name) gets
 * index.html (the SPA routes with the History API: /notifications/abc is a UI page, not a file).
 */
export async function registerStaticUi(app: FastifyInstance, webRoot: string): Promise<void> {
  const built = existsSync(join(webRoot, 'index.html'));
  if (!built) app.log.warn({ webRoot }, 'web UI not built: run `npm run build:web`');
  await app.register(fastifyStatic, {
    root: webRoot,
    // Routes for the files present at start-up (a build is immutable), so that every other path
    // reaches the SPA route below instead of a not-found handler (the root app owns that one).
    wildcard: false,
    index: ['index.html'],
    // Dotfiles and directory listings are never served.
    dotfiles: 'deny',
    list: false,
    cacheControl: false,
    setHeaders(res, path) {
      res.setHeader(
        'cache-control',
        path.includes(`${join('/assets')}/`) ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
      // `<herald-inbox>` runs in the callers' own web apps, on other origins: their pages may
      // load this one script (the security headers say same-origin for everything else).
      if (path === join(webRoot, INBOX_SCRIPT)) res.setHeader('cross-origin-resource-policy', 'cross-origin');
    },
  });
  app.get('/*', (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    if (climbs(path)) return sendNoRoute(request, reply);
    if (!/\.[a-z0-9]+$/i.test(path)) {
      if (!built) return sendProblem(reply, 'UNAVAILABLE', 'The web UI is not built.');
      reply.header('cache-control', 'no-cache');
      return reply.sendFile('index.html');
    }
    return sendNoRoute(request, reply);
  });
}
