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
  // The URL is copied when the route is added: Fastify may hand the same options on for another
  // URL (a prefix's route with and without its trailing slash).
  const added: { url: string; options: RouteOptions }[] = [];
  // Built at the first lookup (not at start-up), again after a route is added.
  let routes: { path: RegExp; url: string; options: RouteOptions }[] | undefined;
  app.addHook('onRoute', (options) => {
    added.push({ url: options.url, options });
    routes = undefined;
  });
  const allows = (options: RouteOptions, method: string) =>
    Array.isArray(options.method) ? options.method.includes(method) : options.method === method;
  return (method, url) => {
    routes ??= added
      .map((route) => ({ ...route, path: pattern(route.url) }))
      .sort((a, b) => b.url.length - a.url.length);
    const route = routes.find((r) => allows(r.options, method) && r.path.test(url));
    return route?.options.bodyLimit ?? fallback;
  };
}
