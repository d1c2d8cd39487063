import type { Metrics } from '../metrics.ts';
import type { Routes } from './types.ts';

/** `GET /metrics` in Prometheus text format; protected (scope admin), scraped with client credentials. */
export function metricsRoutes(metrics: Metrics): Routes {
  return (app) => {
    app.get(
      '/metrics',
      {
        config: { scope: 'admin' },
        schema: {
          tags: ['ops'],
          summary: 'Prometheus metrics',
          response: {
            200: {
              description: 'The Prometheus text exposition format',
              content: { 'text/plain; version=0.0.4': { schema: { type: 'string' } } },
            },
          },
        },
      },
      async (_request, reply) => {
        reply.type(metrics.registry.contentType);
        return metrics.exposition();
      },
    );
  };
}
