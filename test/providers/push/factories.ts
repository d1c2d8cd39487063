import { randomUUID } from 'node:crypto';
import { type Clock, systemClock } from '../../../src/clock.ts';
import type { OutgoingMessage, ProviderDeps } from '../../../src/providers/types.ts';
import { testConfig } from '../../helpers/config.ts';

/**
 * Provider deps for push tests: a test config, the given clock, a log that keeps what it was
 * told. `allowed`: origins or hosts to list in HERALD_PUSH_ALLOWED_HOSTS (the local peers).
 */
export function pushDeps(
  clock: Clock = systemClock,
  ...allowed: string[]
): ProviderDeps & { logged: string[] } {
  const logged: string[] = [];
  const keep = (obj: object, msg?: string) => {
    logged.push(`${msg ?? ''} ${JSON.stringify(obj)}`);
  };
  return {
    config: testConfig(
      allowed.length > 0 ? { HERALD_PUSH_ALLOWED_HOSTS: allowed.map(hostOf).join(',') } : {},
    ),
    clock,
    reports: { report: async () => {} },
    log: { info: keep, warn: keep, error: keep },
    logged,
  };
}

/** A rendered push message with a fresh UUID; override any field. */
export function pushMessage(overrides: Partial<OutgoingMessage> = {}): OutgoingMessage {
  return {
    notificationId: randomUUID(),
    tenant: 'default',
    channel: 'push',
    priority: 'NORMAL',
    recipient: {},
    content: { title: 'Build finished', body: 'All 42 checks passed', data: { build: 42 } },
    attempt: 1,
    ...overrides,
  };
}

/** An abort signal that never fires. */
export const never = new AbortController().signal;

/** `host:port` of an origin (or a host given as is). */
const hostOf = (origin: string) => (origin.includes('://') ? new URL(origin).host : origin);

/** `deps` with these origins listed in HERALD_PUSH_ALLOWED_HOSTS (a local push service). */
export function allowing<D extends ProviderDeps>(deps: D, ...origins: string[]): D {
  const providers = { ...deps.config.providers, pushAllowedHosts: origins.map(hostOf) };
  return { ...deps, config: { ...deps.config, providers } };
}
