import type { FastifyInstance, RouteOptions } from 'fastify';

const SPECIAL = /[.*+?^${}()|[\]\\]/g;

/** A route URL (`/webhooks/:provider`, `/api/*`) as a pattern for request URLs, query allowed. */
function pattern(url: string): RegExp {
  const path = url
    .replace(SPECIAL, '\\$&')
    .replace(/:[^/]+/g, '[^/]+')
    .replace(/\\\*/g, '.*');
  return new RegExp(`^${path}(?:\\?|$)`);
}

/**
 * The body limit of the route a request names, as the route declares it (`bodyLimit` in its
 * options; `fallback` when it declares none), for checks made before Fastify routes a request: the server's answer
 * to `Expect: 100-continue` (server-options.ts). Where several routes match (`/api/*` and
 * `/api/notifications/batch`), the longest route URL decides. Must be called before the routes
 * are added; a route's options are read when a request asks, so a limit set by a later onRoute
 * hook (the gateway's rules) counts.
 */
export function routeBodyLimits(
  app: FastifyInstance,
  fallback: number,
): (method: string, url: string) => number {
  const routes: { path: RegExp; options: RouteOptions }[] = [];
  let sorted = false;
  app.addHook('onRoute', (options) => {
    routes.push({ path: pattern(options.url), options });
    sorted = false;
  });
  const allows = (options: RouteOptions, method: string) =>
    Array.isArray(options.method) ? options.method.includes(method) : options.method === method;
  return (method, url) => {
    if (!sorted) routes.sort((a, b) => b.options.url.length - a.options.url.length);
    sorted = true;
    const route = routes.find((r) => allows(r.options, method) && r.path.test(url));
    return route?.options.bodyLimit ?? fallback;
  };
}
