import { type Static, Type } from '@sinclair/typebox';
import { CHANNELS, type Channel } from '../channels.ts';
import type { FieldError } from '../errors.ts';
import { BULK_SHARE, reserveCaps } from '../reserve.ts';
import type { QuotaLimit, QuotaLimits } from '../store/port/quotas.ts';

const DAY_MS = 86_400_000;
/** The day last asked for: every acceptance asks, and the answer changes once a day. */
let lastDay = { number: Number.NaN, text: '' };
/** A UTC day, as the daily limits count it: `YYYY-MM-DD`. */
export const utcDay = (now: number) => {
  const number = Math.floor(now / DAY_MS);
  if (number !== lastDay.number)
    lastDay = { number, text: new Date(number * DAY_MS).toISOString().slice(0, 10) };
  return lastDay.text;
};
/** Seconds from `now` to the next UTC midnight, when every daily count starts again. */
export const secondsToMidnight = (now: number) => Math.max(1, Math.ceil((DAY_MS - (now % DAY_MS)) / 1000));

const MAX_RATE = 1_000_000;
const MAX_DAY = 1_000_000_000_000;

export const QuotaLimitSchema = Type.Object(
  {
    ratePerSecond: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_RATE,
        description: 'Acceptances per second, refilled continuously',
      }),
    ),
    burst: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_RATE * 60,
        description: 'The bucket: most acceptances at once (with ratePerSecond; defaults to it)',
      }),
    ),
    perDay: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_DAY, description: 'Acceptances per UTC day' }),
    ),
  },
  { additionalProperties: false },
);

export const QuotaBody = Type.Object(
  {
    total: Type.Optional(QuotaLimitSchema),
    channels: Type.Optional(
      Type.Object(Object.fromEntries(CHANNELS.map((c) => [c, Type.Optional(QuotaLimitSchema)])), {
        additionalProperties: false,
      }),
    ),
  },
  { additionalProperties: false },
);
export type QuotaBodyType = Static<typeof QuotaBody>;

/** Herald's own checks beyond the schema's: a burst needs a rate, a limit limits something, a quota has a limit. */
export function quotaProblems(body: QuotaLimits): FieldError[] {
  const errors: FieldError[] = [];
  const check = (limit: QuotaLimit, path: string) => {
    if (limit.burst !== undefined && limit.ratePerSecond === undefined)
      errors.push({ path: `${path}/burst`, message: 'needs ratePerSecond' });
    if (limit.ratePerSecond === undefined && limit.perDay === undefined)
      errors.push({ path, message: 'must set ratePerSecond or perDay' });
  };
  if (body.total) check(body.total, 'body/total');
  for (const [channel, limit] of Object.entries(body.channels ?? {}))
    if (limit) check(limit, `body/channels/${channel}`);
  if (!body.total && Object.values(body.channels ?? {}).every((l) => l === undefined))
    errors.push({ path: 'body', message: 'must set a total or a channel limit (DELETE removes the quota)' });
  return errors;
}

/** The limits as stored and shown: a burst defaults to one second's rate. */
export function normalLimits(body: QuotaLimits): QuotaLimits {
  const one = (l: QuotaLimit): QuotaLimit => ({
    ...(l.ratePerSecond === undefined
      ? {}
      : { ratePerSecond: l.ratePerSecond, burst: l.burst ?? l.ratePerSecond }),
    ...(l.perDay === undefined ? {} : { perDay: l.perDay }),
  });
  const channels = Object.fromEntries(
    CHANNELS.flatMap((c) => (body.channels?.[c] ? [[c, one(body.channels[c] as QuotaLimit)]] : [])),
  );
  return {
    ...(body.total ? { total: one(body.total) } : {}),
    ...(Object.keys(channels).length > 0 ? { channels } : {}),
  };
}

/**
 * One counted scope of a tenant: `total`, a channel, or either's bulk share (`#bulk`: the part of
 * the limit NORMAL and LOW may use, reserve.ts). A scope with no limit only counts.
 */
export interface Scope {
  key: string;
  /** The scope shown (total or a channel); a bulk scope names its whole one. */
  name: 'total' | Channel;
  bulk: boolean;
  ratePerSecond: number | null;
  burst: number | null;
  perDay: number | null;
}

const BULK = '#bulk';

/**
 * The scopes an acceptance of `channel` spends from, for CRITICAL and HIGH (`urgent`) and for
 * NORMAL and LOW: the total and the channel, and each limited one's bulk share (reserve.ts:
 * NORMAL and LOW may use `BULK_SHARE` of each rate, burst and daily limit, CRITICAL and HIGH all).
 * The total is always counted (the daily usage shown); a channel only when it has a limit.
 */
export function scopesOf(limits: QuotaLimits): Map<Channel, { urgent: Scope[]; bulk: Scope[] }> {
  const whole = (name: 'total' | Channel, l: QuotaLimit | undefined): Scope => ({
    key: name,
    name,
    bulk: false,
    ratePerSecond: l?.ratePerSecond ?? null,
    burst: l?.ratePerSecond === undefined ? null : (l.burst ?? l.ratePerSecond),
    perDay: l?.perDay ?? null,
  });
  const share = (s: Scope): Scope[] =>
    s.ratePerSecond === null && s.perDay === null
      ? []
      : [
          {
            ...s,
            key: `${s.key}${BULK}`,
            bulk: true,
            ratePerSecond: s.ratePerSecond === null ? null : s.ratePerSecond * BULK_SHARE,
            burst: s.burst === null ? null : reserveCaps(s.burst).bulk,
            perDay: s.perDay === null ? null : reserveCaps(s.perDay).bulk,
          },
        ];
  const total = whole('total', limits.total);
  const out = new Map<Channel, { urgent: Scope[]; bulk: Scope[] }>();
  for (const channel of CHANNELS) {
    const limit = limits.channels?.[channel];
    const mine = limit ? [whole(channel, limit)] : [];
    const urgent = [total, ...mine];
    out.set(channel, { urgent, bulk: [...urgent, ...urgent.flatMap(share)] });
  }
  return out;
}

/** A tenant's quota as GET answers it: each limit with today's usage. */
export interface QuotaView {
  tenant: string;
  day: string;
  updatedAt: string;
  total: QuotaLimitView;
  channels: Partial<Record<Channel, QuotaLimitView>>;
}
export interface QuotaLimitView extends QuotaLimit {
  usedToday: number;
}

/** The view of `limits`, `usedToday(scope)` giving each scope's count of `day`. */
export function quotaView(
  tenant: string,
  limits: QuotaLimits,
  updatedAt: number,
  day: string,
  usedToday: (scope: string) => number,
): QuotaView {
  const channels: Partial<Record<Channel, QuotaLimitView>> = {};
  for (const [channel, limit] of Object.entries(limits.channels ?? {})) {
    channels[channel as Channel] = { ...limit, usedToday: usedToday(channel) };
  }
  return {
    tenant,
    day,
    updatedAt: new Date(updatedAt).toISOString(),
    total: { ...limits.total, usedToday: usedToday('total') },
    channels,
  };
}
