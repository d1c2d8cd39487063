import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { argon2Operations } from './auth/passwords.ts';

/**
 * Herald's Prometheus metrics, one registry per process (tests build several apps in one
 * process, so nothing is registered on prom-client's global registry).
 */
export interface Metrics {
  registry: Registry;
  accepted: Counter<'channel' | 'priority'>;
  outcomes: Counter<'provider' | 'outcome'>;
  argon2: Counter;
  /** Seconds from acceptance to the provider call, by priority (the isolation bench's figure). */
  pickupLatency: Histogram<'priority'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    accepted: new Counter({
      name: 'herald_notifications_accepted_total',
      help: 'Notifications durably accepted',
      labelNames: ['channel', 'priority'],
      registers: [registry],
    }),
    outcomes: new Counter({
      name: 'herald_delivery_outcomes_total',
      help: 'Provider call outcomes (sent, delivered, transient, permanent, config)',
      labelNames: ['provider', 'outcome'],
      registers: [registry],
    }),
    argon2: new Counter({
      name: 'herald_argon2_operations_total',
      help: 'argon2id hashes and verifications (logins, password changes; never client secrets)',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(argon2Operations());
      },
    }),
    pickupLatency: new Histogram({
      name: 'herald_pickup_latency_seconds',
      help: 'From acceptance to the provider call',
      labelNames: ['priority'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 60, 300, 1800],
      registers: [registry],
    }),
  };
}
