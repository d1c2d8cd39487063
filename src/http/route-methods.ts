import type { FastifyInstance } from 'fastify';

/** A route path as a regular expression: `:name` segments match any one segment. */
function patternOf(url: string): RegExp {
  const segments = url
    .split('/')
    .map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${segments.join('/')}$`);
}

/**
 * Collects the app's routes as they are registered (call it before any is) and answers which
 * methods a path is served with: a request with another method is `405` with `Allow`, not the
 * `404` of a path nothing serves. Catch-all routes (`*`: the web UI's files) are left out, or
 * their method would be "allowed" on every path.
 */
export function routeMethods(app: FastifyInstance): (path: string) => string[] {
  const routes: Array<{ pattern: RegExp; methods: string[] }> = [];
  app.addHook('onRoute', (route) => {
    if (route.url.includes('*')) return;
    routes.push({
      pattern: patternOf(route.url),
      methods: Array.isArray(route.method) ? route.method : [route.method],
    });
  });
  return (path) => [...new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods))].sort();
}
