import { type SmtpPeer, startSmtpPeer } from '../../test/helpers/peers/smtp.ts';
import { portOutsideEphemeralRange } from '../../test/helpers/ports.ts';
import { login, type NotificationView } from '../lib/api.ts';
import { notification } from '../lib/bodies.ts';
import { startHerald } from '../lib/herald.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { type PacedResult, runPaced } from '../lib/paced.ts';
import { measured, type Row } from '../lib/report.ts';
import { percentile, spread } from '../lib/stats.ts';
import { sinceAcceptance, viewsWhen } from './isolation-latency.ts';
import type { Scenario } from './types.ts';

const sentBy = (view: NotificationView) => view.events.find((e) => e.type === 'SENT')?.provider;
const failedFirst = (view: NotificationView) => view.events.some((e) => e.type === 'ATTEMPT_FAILED');
const summary = (values: number[]) =>
  values.length === 0 ? 'none' : `${spread(values)}, of ${values.length}`;

/**
 * Provider failover (issue 16): the primary SMTP server refuses every connection while one
 * CRITICAL email is sent every 10 ms; each must reach SMTP_FALLBACK_URL. Then the primary listens
 * again on its port and the sends go on until the primary's half-open circuit takes the traffic
 * back. Latency is acceptance to the SENT event (the fallback's answer), per notification.
 */
async function run(options: BenchOptions): Promise<Row[]> {
  const s = options.sizes.failover;
  // Nothing listens there: connections are refused at once (and no listen(0) takes the port).
  const primaryPort = await portOutsideEphemeralRange();
  const fallback = await startSmtpPeer();
  let primary: SmtpPeer | undefined;
  const herald = await startHerald({
    env: {
      // No rate limit (the default is 20/s): the paced CRITICAL load is more than that.
      SMTP_URL: `smtp://127.0.0.1:${primaryPort}?rateLimit=0`,
      SMTP_FALLBACK_URL: fallback.url(undefined, undefined, 'rateLimit=0'),
      EMAIL_FROM: 'Herald <noreply@example.com>',
    },
  });
  try {
    const api = await login(herald.url);
    const send = (forMs: number): Promise<PacedResult> =>
      runPaced({
        url: herald.url,
        path: '/notifications',
        headers: api.auth,
        body: JSON.stringify(notification('CRITICAL')),
        everyMs: s.everyMs,
        forMs,
        collect: true,
      });
    progress(`failover: primary down, one CRITICAL every ${s.everyMs} ms for ${s.downMs} ms`);
    const down = await send(s.downMs);
    primary = await startSmtpPeer({ port: primaryPort });
    const backAt = Date.now();
    progress(`failover: primary back, sending for ${s.backMs} ms`);
    const back = await send(s.backMs);
    const { views, waiting } = await viewsWhen(
      api,
      down.accepted.map((c) => c.id),
      (view) => sentBy(view) !== undefined || view.status === 'FAILED',
      'failover: CRITICAL sent',
    );
    const straight = views.filter((v) => !failedFirst(v)).map((v) => sinceAcceptance(v, 'SENT'));
    const retried = views.filter(failedFirst).map((v) => sinceAcceptance(v, 'SENT'));
    const viaFallback = views.filter((v) => sentBy(v) === 'smtp-fallback').length;
    const returned = primary.received[0];
    return [
      measured(
        'failover',
        'CRITICAL p99, acceptance to SENT by the fallback (primary circuit open)',
        percentile(straight, 99),
        'ms',
        {
          target: { bound: 1000, better: 'lower', text: '<= 1000 ms' },
          note:
            `${summary(straight)}; ${viaFallback} of ${down.sent} sent by smtp-fallback while the primary ` +
            `refused connections (${waiting} unsent at the deadline); before the circuit opened, ` +
            `attempt at the primary then retry at the fallback: ${summary(retried)}` +
            down.failures.map((f) => `; failure: ${f}`).join(''),
        },
      ),
      measured(
        'failover',
        'primary back to its first message (half-open probe)',
        returned ? returned.at - backAt : Number.NaN,
        'ms',
        {
          note: returned
            ? `the circuit's open time (5 s, doubling on each failed probe) bounds it; ${primary.received.length} of ` +
              `${back.sent} later sends went to the primary`
            : `no message reached the primary within ${s.backMs} ms`,
        },
      ),
    ];
  } finally {
    await herald.stop();
    await fallback.close();
    await primary?.close();
  }
}

export const failoverScenario: Scenario = {
  name: 'failover',
  title: '16. Failover: CRITICAL email with the primary SMTP server down, then back',
  run,
};
