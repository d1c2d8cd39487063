import type { FastifyInstance } from 'fastify';

const SPECIAL = /[.*+?^${}()|[\]\\]/g;

/**
 * The body limit of the route a URL names, as the routes declare it (`bodyLimit` in their
 * options), for checks made before Fastify routes a request: the server's answer to
 * `Expect: 100-continue` (server-options.ts). Must be called before the routes are added.
 */
export function routeBodyLimits(app: FastifyInstance, fallback: number): (url: string) => number {
  const routes: { path: RegExp; limit: number }[] = [];
  app.addHook('onRoute', (route) => {
    if (route.bodyLimit === undefined) return;
    const path = route.url.replace(SPECIAL, '\\$&').replace(/:[^/]+/g, '[^/]+');
    routes.push({ path: new RegExp(`^${path}(?:[?#]|$)`), limit: route.bodyLimit });
  });
  return (url) => routes.find((route) => route.path.test(url))?.limit ?? fallback;
}
