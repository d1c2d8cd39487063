import type { Metrics } from '../metrics.ts';
import type { Routes } from './types.ts';

/** `GET /metrics` in Prometheus text format; protected (scope admin), scraped with client credentials. */
export function metricsRoutes(metrics: Metrics): Routes {
  return (app) => {
    app.get(
      '/metrics',
      { config: { scope: 'admin' }, schema: { tags: ['ops'], summary: 'Prometheus metrics' } },
      async (_request, reply) => {
        reply.type(metrics.registry.contentType);
        return metrics.exposition();
      },
    );
  };
}
