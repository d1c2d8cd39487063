import type { Metrics } from '../metrics.ts';
import type { Routes } from './types.ts';

const PROMETHEUS_TEXT = {
  200: {
    description: 'The Prometheus text exposition format',
    content: {
      'text/plain; version=0.0.4': {
        schema: { type: 'string' },
        example:
          '# HELP herald_notifications_accepted_total Notifications durably accepted\n# TYPE herald_notifications_accepted_total counter\nherald_notifications_accepted_total{channel="email",priority="HIGH"} 42\n',
      },
    },
  },
};

const OPERATORS = "Every tenant's traffic: admins of tenant `default` only (`403` for others).";

/**
 * `GET /metrics` in Prometheus text format: this process (and its dispatch thread); and
 * `GET /metrics/cluster`: Herald's own metrics summed over every live process of the deployment
 * (metrics-publisher.ts), what the dashboard charts. Protected (scope admin), scraped with
 * client credentials. Both count every tenant's traffic, so only operators may read them.
 */
export function metricsRoutes(metrics: Metrics, cluster: () => Promise<string>): Routes {
  return (app) => {
    app.get(
      '/metrics',
      {
        config: { scope: 'admin', operatorOnly: true },
        schema: {
          tags: ['ops'],
          summary: 'Prometheus metrics of this process',
          description: OPERATORS,
          response: PROMETHEUS_TEXT,
        },
      },
      async (_request, reply) => {
        reply.type(metrics.registry.contentType);
        return metrics.exposition();
      },
    );
    app.get(
      '/metrics/cluster',
      {
        config: { scope: 'admin', operatorOnly: true },
        schema: {
          tags: ['ops'],
          summary: "Herald's metrics summed over every process of the deployment (2 s old at most)",
          description: OPERATORS,
          response: PROMETHEUS_TEXT,
        },
      },
      async (_request, reply) => {
        reply.type(metrics.registry.contentType);
        return cluster();
      },
    );
  };
}
