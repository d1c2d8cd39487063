import { type Api, queues, requireRoute } from '../lib/api.ts';
import { deploy, type Engine } from '../lib/deploy.ts';
import { deliveredSpan, watchDrain } from '../lib/drain.ts';
import { type BatchBody, fillBacklog } from '../lib/fill.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { postgresNote } from '../lib/postgres.ts';
import { measured, type Row } from '../lib/report.ts';
import type { Scenario } from './types.ts';

/** Where a bench deployment keeps its data: the SQLite directory or the PostgreSQL URL. */
export type DataAt = { dataDir: string; databaseUrl?: undefined } | { databaseUrl: string };

/** What a drain sends, when not emails to the sandbox: its batches and where they go, for the row. */
export interface Sent {
  batch: BatchBody;
  /** Run on the filler before it queues (acceptance may need what the batches name). */
  before?(api: Api): Promise<void>;
  /** "to the inbox": the row says deliveries/s to it. */
  to: string;
}

/**
 * Scenario 4: queue the NORMAL backlog with no worker running (HERALD_ROLES=auth,api), then
 * start Herald with the worker on the same data and time the drain to the sandbox provider.
 * `prepare` runs on the stopped data in between (the suppressions scenario fills its table);
 * `sent` drains other notifications (the inbox scenario's inapp).
 */
export async function dispatchOn(
  engine: Engine,
  options: BenchOptions,
  prepare?: { name: string; run(at: DataAt): Promise<void> },
  sent?: Sent,
): Promise<Row[]> {
  const name = prepare?.name ?? (engine === 'sqlite' ? 'dispatch' : 'dispatch (postgres)');
  const { count } = options.sizes.dispatch;
  const filler = await deploy(engine, { roles: 'auth,api', workers: 0 });
  const dataDir = filler.processes[0]?.dataDir as string;
  const databaseUrl = filler.databaseUrl;
  try {
    await requireRoute(
      filler.api,
      'POST',
      '/notifications/batch',
      { notifications: [] },
      'the batch endpoint',
    );
    await queues(filler.api);
    await sent?.before?.(filler.api);
    await fillBacklog(filler.api, count, 'NORMAL', `${name} backlog`, filler.urls, sent?.batch);
  } finally {
    await filler.stop();
  }
  await prepare?.run(databaseUrl ? { databaseUrl } : { dataDir });
  progress(`${name}: starting Herald with the worker on the backlog`);
  const runner = await deploy(engine, { dataDir, databaseUrl, workers: 2 });
  try {
    const drain = await watchDrain(runner.api, Math.max(120_000, count), name);
    if (drain.left > 0) {
      throw new Error(
        `${drain.left} of ${drain.from} still outstanding after ${Math.round(drain.seconds)} s`,
      );
    }
    const span = await deliveredSpan(databaseUrl ? { databaseUrl } : { dataDir });
    const seen = `/admin/queues saw ${drain.from.toLocaleString('en-US')} drained in ${drain.seconds.toFixed(1)} s (${Math.round(drain.perSecond).toLocaleString('en-US')}/s, polled each second)`;
    // The store's DELIVERED timestamps are exact; the queue view (polled each second) is the fallback.
    const perSecond = span?.perSecond ?? drain.perSecond;
    const source = span
      ? `from the store's DELIVERED events (${span.count.toLocaleString('en-US')}, first to last); ${seen}`
      : seen;
    return [
      measured(
        name,
        `deliveries/s ${sent?.to ?? 'to the sandbox'} (${count.toLocaleString('en-US')} NORMAL)`,
        perSecond,
        '/s',
        {
          target: sent ? undefined : { bound: 30_000, better: 'higher', text: '>= 30,000/s' },
          note: engine === 'postgres' ? `${source}; ${postgresNote(2)}` : source,
        },
      ),
    ];
  } finally {
    await runner.stop();
  }
}

export const dispatchScenario: Scenario = {
  name: 'dispatch',
  title: '4. Dispatch: drain NORMAL to the sandbox',
  run: (options) => dispatchOn('sqlite', options),
};
