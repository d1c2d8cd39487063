import { TypeCompiler } from '@sinclair/typebox/compiler';
import { TENANT_NAME } from '../auth/principal.ts';
import { CHANNELS, type Channel } from '../channels.ts';
import { normalLimits, QuotaBody, quotaProblems, quotaView, utcDay } from '../quotas/model.ts';
import type { QuotaLimit, QuotaLimits } from '../store/port/quotas.ts';
import { parseOptions, runCli, UsageError } from './support.ts';

export const QUOTAS_HELP = `Usage: herald quotas set --tenant T [--channel C] [--rate N [--burst N]] [--per-day N]
       herald quotas get --tenant T
       herald quotas clear --tenant T [--channel C]

Limits a tenant's acceptance (docs/quotas.md): per second (a token bucket: --rate with --burst,
by default one second's rate) and per UTC day, in total or for one channel (${CHANNELS.join(', ')}).
\`set\` replaces the limit it names (the total, or --channel's) and keeps the others; \`clear\`
removes one channel's limit, or without --channel the whole quota. Running processes apply a
change within a second.

Examples:
  herald quotas set --tenant acme --rate 100 --burst 200 --per-day 100000
  herald quotas set --tenant acme --channel sms --per-day 5000
  herald quotas get --tenant acme`;

const OPTIONS = {
  tenant: { type: 'string' },
  channel: { type: 'string' },
  rate: { type: 'string' },
  burst: { type: 'string' },
  'per-day': { type: 'string' },
} as const;

/** `herald quotas set|get|clear`: the same quotas as PUT/GET/DELETE /admin/tenants/{tenant}/quotas, in the store. */
export async function runQuotas(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return runCli(env, QUOTAS_HELP, async ({ store, clock, out }) => {
    const { values, positionals } = parseOptions(args, OPTIONS, true);
    const action = positionals[0];
    if (positionals.length !== 1 || !['set', 'get', 'clear'].includes(action as string))
      throw new UsageError(`Unknown quotas command "${positionals.join(' ')}".`);
    const tenant = values.tenant;
    if (tenant === undefined || !TENANT_NAME.test(tenant))
      throw new UsageError('--tenant must name a tenant.');
    const channel = values.channel;
    if (channel !== undefined && !(CHANNELS as readonly string[]).includes(channel))
      throw new UsageError(`--channel must be one of ${CHANNELS.join(', ')}.`);
    const current = (await store.quotas.get(tenant))?.limits ?? {};
    const show = async () => {
      const record = await store.quotas.get(tenant);
      if (!record) {
        out(`${tenant}: no quota`);
        return;
      }
      const day = utcDay(clock.now());
      const used = new Map((await store.quotas.usage(day, tenant)).map((r) => [r.scope, r.used]));
      out(
        JSON.stringify(
          quotaView(tenant, record.limits, record.updatedAt, day, (s) => used.get(s) ?? 0),
          null,
          2,
        ),
      );
    };
    if (action === 'get') {
      await show();
      return 0;
    }
    if (action === 'clear') {
      const next: QuotaLimits = { ...current, channels: { ...current.channels } };
      if (channel === undefined || !withLimit(next, channel as Channel, undefined))
        await store.quotas.remove(tenant);
      else await store.quotas.put(tenant, normalLimits(next), clock.now());
      await show();
      return 0;
    }
    const limit: QuotaLimit = {};
    for (const [option, field] of [
      ['rate', 'ratePerSecond'],
      ['burst', 'burst'],
      ['per-day', 'perDay'],
    ] as const) {
      const text = values[option];
      if (text === undefined) continue;
      if (!/^\d+$/.test(text)) throw new UsageError(`--${option} must be a whole number.`);
      limit[field] = Number(text);
    }
    const next: QuotaLimits = { ...current, channels: { ...current.channels } };
    if (channel === undefined) next.total = limit;
    else withLimit(next, channel as Channel, limit);
    const check = TypeCompiler.Compile(QuotaBody);
    const errors = check.Check(next)
      ? quotaProblems(next)
      : [...check.Errors(next)].map((e) => ({ path: e.path, message: e.message }));
    if (errors.length > 0)
      throw new UsageError(
        errors.map((e) => `${e.path.replace(/^body\/?/, '') || 'quota'}: ${e.message}`).join('\n'),
      );
    await store.quotas.put(tenant, normalLimits(next), clock.now());
    await show();
    return 0;
  });
}

/** Sets (or, undefined, removes) a channel's limit; whether any limit is left. */
function withLimit(limits: QuotaLimits, channel: Channel, limit: QuotaLimit | undefined): boolean {
  const channels = { ...limits.channels };
  if (limit === undefined) delete channels[channel];
  else channels[channel] = limit;
  limits.channels = channels;
  return limits.total !== undefined || Object.values(channels).some((l) => l !== undefined);
}
