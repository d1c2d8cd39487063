import { systemClock } from '../../../src/clock.ts';
import type { DeliveryReport } from '../../../src/notifications/delivery-report.ts';
import type { ProviderDeps } from '../../../src/providers/types.ts';
import { testConfig } from '../../helpers/config.ts';

/** ProviderDeps for provider tests: a quiet log that keeps its lines, and a sink that keeps reports. */
export function providerDeps(env: Record<string, string> = {}) {
  const reports: DeliveryReport[] = [];
  const logged: Array<{ level: string; obj: object; msg?: string }> = [];
  const log = (level: string) => (obj: object, msg?: string) => {
    logged.push({ level, obj, ...(msg === undefined ? {} : { msg }) });
  };
  const deps: ProviderDeps = {
    config: testConfig(env),
    clock: systemClock,
    reports: {
      async report(report) {
        reports.push(report);
      },
    },
    log: { info: log('info'), warn: log('warn'), error: log('error') },
  };
  return { deps, reports, logged };
}

/** A rendered message as the scheduler hands it to a provider. */
export function outgoing(
  channel: 'email' | 'sms',
  recipient: { email?: string; phone?: string },
  content: Record<string, string>,
  notificationId: string = crypto.randomUUID(),
) {
  return {
    notificationId,
    tenant: 't1',
    channel,
    priority: 'NORMAL' as const,
    recipient,
    content,
    attempt: 1,
  };
}

/** A signal that never fires. */
export const never = new AbortController().signal;
