import { type Static, Type } from '@sinclair/typebox';
import { visibleTenant } from '../auth/principal.ts';
import { CHANNELS, type Channel } from '../channels.ts';
import { iso } from '../clock.ts';
import type { CoreDeps } from '../deps.ts';
import { withExample } from '../http/examples.ts';
import { literals } from '../http/schema.ts';
import type { RouteModule } from '../http/types.ts';
import { HISTORY_WINDOWS, type HistoryWindow, type Outcome, windowStart } from './outcomes.ts';

const WINDOWS = Object.keys(HISTORY_WINDOWS) as HistoryWindow[];

const Query = withExample(
  Type.Object(
    {
      window: Type.Optional(
        Type.Union(
          WINDOWS.map((w) => Type.Literal(w)),
          { description: '`1h`: the last hour in minutes (the default); `7d`: the last 7 days in hours' },
        ),
      ),
    },
    { additionalProperties: false },
  ),
  { window: '1h' },
);

const Bucket = Type.Object({
  start: Type.String({ format: 'date-time', description: 'Start of the bucket (UTC)' }),
  delivered: Type.Integer({ description: 'The provider accepted them (SENT, or SENT then DELIVERED)' }),
  failed: Type.Integer({ description: 'FAILED: a permanent error, or the last attempt used up' }),
  skipped: Type.Integer({ description: 'Not sent on purpose: the recipient is suppressed' }),
});

const History = Type.Object({
  window: literals(WINDOWS),
  bucketSeconds: Type.Integer({ description: 'Length of each bucket' }),
  from: Type.String({ format: 'date-time', description: 'Start of the oldest bucket' }),
  to: Type.String({ format: 'date-time', description: 'End of the newest bucket, the one in progress' }),
  channels: Type.Array(
    Type.Object({
      channel: literals(CHANNELS),
      buckets: Type.Array(Bucket, {
        description: 'Oldest first, one per bucket of the window, empty ones included',
      }),
    }),
  ),
});
type HistoryBody = Static<typeof History>;

const FIELD: Record<Outcome, 'delivered' | 'failed' | 'skipped'> = {
  DELIVERED: 'delivered',
  FAILED: 'failed',
  SKIPPED: 'skipped',
};

/** The example: the last hour of a quiet tenant, two of its 60 buckets shown. */
const example: HistoryBody = {
  window: '1h',
  bucketSeconds: 60,
  from: '2026-11-28T08:31:00.000Z',
  to: '2026-11-28T09:31:00.000Z',
  channels: [
    {
      channel: 'email',
      buckets: [
        { start: '2026-11-28T09:29:00.000Z', delivered: 120, failed: 2, skipped: 1 },
        { start: '2026-11-28T09:30:00.000Z', delivered: 37, failed: 0, skipped: 0 },
      ],
    },
  ],
};

/** The window's buckets, every channel and bucket present, from the store's non-empty ones. */
async function historyOf(deps: CoreDeps, window: HistoryWindow, tenant?: string): Promise<HistoryBody> {
  const { spanMs, buckets } = HISTORY_WINDOWS[window];
  const from = windowStart(window, deps.clock.now());
  const rows = await deps.store.outcomes.read({ spanMs, since: from, tenant });
  const grid = new Map<Channel, HistoryBody['channels'][number]['buckets']>(
    CHANNELS.map((channel) => [
      channel,
      Array.from({ length: buckets }, (_, i) => ({
        start: iso(from + i * spanMs),
        delivered: 0,
        failed: 0,
        skipped: 0,
      })),
    ]),
  );
  for (const row of rows) {
    const bucket = grid.get(row.channel)?.[(row.bucket - from) / spanMs];
    if (bucket) bucket[FIELD[row.outcome]] += row.n;
  }
  return {
    window,
    bucketSeconds: spanMs / 1000,
    from: iso(from),
    to: iso(from + buckets * spanMs),
    channels: [...grid].map(([channel, list]) => ({ channel, buckets: list })),
  };
}

/**
 * GET /admin/history, scope admin: delivered, failed and skipped per channel over the last hour
 * or 7 days (notifications/outcomes.ts). Herald's extension: the contract names no such route.
 */
export const historyRoutes: RouteModule<CoreDeps> = (app, deps) => {
  app.get(
    '/admin/history',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Delivered, failed and skipped notifications per channel over the last hour or 7 days',
        description:
          "Counted in the database by whichever process completed them, in 1-minute buckets for `window=1h` and 1-hour buckets for `window=7d`; the newest bucket is the one in progress. Of every tenant's notifications for admins of tenant `default`, of the caller's tenant's only for other admins. `delivered` is counted once, when the provider accepts the message; a later delivery report changes no count. Cancelled and expired notifications are not counted. Herald's extension to the contract (docs/web-ui.md).",
        querystring: Query,
        response: { 200: withExample(History, example) },
      },
    },
    async (request) => {
      const { window = '1h' } = request.query as Static<typeof Query>;
      return historyOf(deps, window, visibleTenant(request.principal));
    },
  );
};
