import { ServerSchema } from '../../src/config/schema.ts';
import { login } from '../lib/api.ts';
import { notification } from '../lib/bodies.ts';
import { receiverEnv, startReceiver } from '../lib/callback-receiver.ts';
import { deploy } from '../lib/deploy.ts';
import { fillBacklog } from '../lib/fill.ts';
import { progress } from '../lib/log.ts';
import { runPaced } from '../lib/paced.ts';
import { measured, type Row } from '../lib/report.ts';
import { percentile } from '../lib/stats.ts';

/** Herald's default HERALD_CALLBACK_TENANT_CONCURRENCY, as the rows name it. */
const TENANT_SHARE = ServerSchema.properties.callbackTenantConcurrency.default as number;
const NEIGHBOUR = { email: 'neighbour@example.com', password: 'neighbour-password-1' };

/**
 * A neighbour's burst against one tenant's steady callbacks (HERALD_CALLBACK_TENANT_CONCURRENCY): on
 * `npm start`'s layout, tenant `neighbour` registers `callbacks` callbacks (every DELIVERED) and
 * queues `burst` notifications at once, so the callback sender, which every tenant shares, has
 * `callbacks × burst` requests to make; meanwhile the default tenant sends `perSecond`
 * notifications for `forMs` with its one callback. Returns each of the default tenant's
 * callbacks' lag, change to receipt. `tenantConcurrency` sets HERALD_CALLBACK_TENANT_CONCURRENCY
 * (undefined: Herald's default).
 */
export async function neighbourLags(spec: {
  callbacks: number;
  burst: number;
  perSecond: number;
  forMs: number;
  tenantConcurrency?: number;
}): Promise<{ lags: number[]; neighbourReceived: number }> {
  const receiver = await startReceiver();
  const env = {
    ...receiverEnv(receiver),
    ...(spec.tenantConcurrency === undefined
      ? {}
      : { HERALD_CALLBACK_TENANT_CONCURRENCY: String(spec.tenantConcurrency) }),
  };
  const herald = await deploy('sqlite', { env });
  try {
    const api = herald.api;
    const created = await api.request('POST', '/admin/users', {
      ...NEIGHBOUR,
      role: 'admin',
      tenant: 'neighbour',
    });
    if (created.status !== 201) throw new Error(`POST /admin/users: ${created.status}`);
    const neighbour = await login(api.url, NEIGHBOUR);
    const register = async (who: typeof api, path: string) => {
      const response = await who.request('POST', '/callbacks', {
        url: receiver.urlOf(path),
        events: ['DELIVERED'],
      });
      if (response.status !== 201) throw new Error(`POST /callbacks: ${response.status}`);
    };
    await register(api, '/own');
    for (let i = 0; i < spec.callbacks; i++) await register(neighbour, `/neighbour/${i}`);
    // The sender's thread starts with the first callback: one change through it first.
    const first = await api.request('POST', '/notifications', notification('NORMAL'));
    if (first.status !== 201) throw new Error(`POST /notifications: ${first.status}`);
    const deadline = Date.now() + 60_000;
    while (receiver.lagsAt('/own').length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    const own = receiver.lagsAt('/own');
    own.length = 0;
    const label =
      spec.tenantConcurrency === undefined
        ? "Herald's tenant share"
        : `tenant share ${spec.tenantConcurrency}`;
    progress(
      `callbacks (neighbour, ${label}): ${spec.callbacks} callbacks × ${spec.burst} beside ${spec.perSecond}/s`,
    );
    const [, sent] = await Promise.all([
      fillBacklog(neighbour, spec.burst, 'NORMAL', `callbacks (neighbour) burst`),
      runPaced({
        url: api.url,
        path: '/notifications',
        headers: api.auth,
        body: JSON.stringify(notification('NORMAL')),
        everyMs: 1000 / spec.perSecond,
        forMs: spec.forMs,
        collect: false,
      }),
    ]);
    if (sent.failures.length > 0) throw new Error(`steady sender: ${sent.failures.join('; ')}`);
    const until = Date.now() + 120_000;
    while (own.length < sent.acceptedCount && Date.now() < until)
      await new Promise((r) => setTimeout(r, 100));
    if (own.length < sent.acceptedCount)
      throw new Error(`${own.length} of ${sent.acceptedCount} own callbacks`);
    const neighbourReceived = receiver.lags.length - own.length - 1;
    return { lags: own, neighbourReceived };
  } finally {
    await herald.stop();
    await receiver.close();
  }
}

/** The rows: the tenant's own callback lag beside the burst, with Herald's tenant share and without. */
export function neighbourRows(
  spec: { callbacks: number; burst: number; perSecond: number },
  limited: Awaited<ReturnType<typeof neighbourLags>>,
  unlimited: Awaited<ReturnType<typeof neighbourLags>>,
): Row[] {
  const what = `beside another tenant's ${spec.callbacks} callbacks × ${spec.burst.toLocaleString('en-US')}`;
  const note = (run: typeof limited, other: typeof limited, otherLabel: string) =>
    `one callback, ${spec.perSecond}/s: ${run.lags.length.toLocaleString('en-US')} callbacks, p50 ${percentile(run.lags, 50)} ms, max ${Math.max(...run.lags)} ms; the other tenant's callbacks received meanwhile ${run.neighbourReceived.toLocaleString('en-US')}; ${otherLabel}: p99 ${percentile(other.lags, 99)} ms, p50 ${percentile(other.lags, 50)} ms`;
  return [
    measured(
      'callbacks',
      `callback lag p99 ${what} (tenant share ${TENANT_SHARE} in flight)`,
      percentile(limited.lags, 99),
      'ms',
      {
        note: note(limited, unlimited, 'without the tenant share'),
      },
    ),
    measured(
      'callbacks',
      `callback lag p99 ${what} (no tenant share)`,
      percentile(unlimited.lags, 99),
      'ms',
      {
        note: note(unlimited, limited, 'with it'),
      },
    ),
  ];
}
