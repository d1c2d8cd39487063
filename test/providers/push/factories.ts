import { randomUUID } from 'node:crypto';
import { type Clock, systemClock } from '../../../src/clock.ts';
import type { OutgoingMessage, ProviderDeps } from '../../../src/providers/types.ts';
import { testConfig } from '../../helpers/config.ts';

/** Provider deps for push tests: a test config, the given clock, a log that keeps what it was told. */
export function pushDeps(clock: Clock = systemClock): ProviderDeps & { logged: string[] } {
  const logged: string[] = [];
  const keep = (obj: object, msg?: string) => {
    logged.push(`${msg ?? ''} ${JSON.stringify(obj)}`);
  };
  return {
    config: testConfig(),
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
