import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Priority } from '../../src/notifications/model.ts';
import type { NewBroadcast } from '../../src/store/port/broadcasts.ts';
import { type Api, requireRoute } from '../lib/api.ts';
import { deploy, type Engine } from '../lib/deploy.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { pacedCritical } from '../lib/paced.ts';
import { measured, type Row } from '../lib/report.ts';
import { percentile } from '../lib/stats.ts';
import { tempDir } from '../lib/tmp.ts';
import { criticalLatencies } from './isolation-latency.ts';
import type { Scenario } from './types.ts';

export const TOPIC = 'everyone';
const PROFILE = `'{"email":"' || id || '@example.com"}'`;
const NO_PREFERENCES = `'{"channels":{},"categories":{}}'`;

/** A broadcast to TOPIC by email, inline content (`text` its body), as the store's steps benches create it. */
export const topicBroadcast = (
  id: string,
  priority: Priority,
  text: string,
  createdAt: number,
): NewBroadcast => ({
  id,
  tenant: 'default',
  topic: TOPIC,
  channel: 'email',
  priority,
  templateKey: null,
  templateVersion: null,
  content: JSON.stringify({ subject: 'News for {{ who }}', text }),
  variables: JSON.stringify({ who: 'everyone' }),
  metadata: null,
  category: null,
  locale: null,
  scheduledAt: null,
  expiresAt: null,
  createdAt,
});

/**
 * `n` recipients of the bench admin's tenant (`r0000000` on, each with an email address), all
 * subscribed to TOPIC: SQL, in the store's own file.
 */
export function seedSqlite(dataDir: string, n: number): void {
  const db = new Database(join(dataDir, 'herald.db'));
  try {
    const now = Date.now();
    db.transaction(() => {
      db.prepare(
        `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ? - 1),
           ids(id) AS (SELECT printf('r%07d', i) FROM s)
         INSERT INTO recipients (tenant, recipient_id, profile, preferences, created_at, updated_at)
         SELECT 'default', id, ${PROFILE}, ${NO_PREFERENCES}, ?, ? FROM ids`,
      ).run(n, now, now);
      db.prepare(
        `INSERT INTO topic_subscribers (tenant, topic_key, recipient_id, created_at)
         SELECT tenant, ?, recipient_id, ? FROM recipients WHERE tenant = 'default' ORDER BY recipient_id`,
      ).run(TOPIC, now);
      db.prepare(
        `INSERT INTO topics (tenant, topic_key, name, subscribers, created_at, updated_at)
         VALUES ('default', ?, NULL, ?, ?, ?)`,
      ).run(TOPIC, n, now, now);
    })();
  } finally {
    db.close();
  }
}

export async function seedPostgres(url: string, n: number): Promise<void> {
  const { connectPostgres } = await import('../../src/store/postgres/connect.ts');
  const sql = connectPostgres(url, { max: 1 });
  try {
    const now = Date.now();
    await sql.begin(async (tx) => {
      await tx.unsafe(
        `INSERT INTO recipients (tenant, recipient_id, profile, preferences, created_at, updated_at)
         SELECT 'default', id, ${PROFILE}, ${NO_PREFERENCES}, $2, $2
         FROM (SELECT 'r' || lpad(i::text, 7, '0') AS id FROM generate_series(0, $1 - 1) i) ids`,
        [n, now],
      );
      await tx.unsafe(
        `INSERT INTO topic_subscribers (tenant, topic_key, recipient_id, created_at)
         SELECT tenant, $1, recipient_id, $2 FROM recipients WHERE tenant = 'default' ORDER BY recipient_id`,
        [TOPIC, now],
      );
      await tx.unsafe(
        `INSERT INTO topics (tenant, topic_key, name, subscribers, created_at, updated_at)
         VALUES ('default', $1, NULL, $2, $3, $3)`,
        [TOPIC, n, now],
      );
    });
    // Statistics, as autovacuum would have gathered them for a topic that grew to this size over
    // time: without them the planner takes the freshly seeded tables for empty ones.
    await sql.unsafe('ANALYZE recipients, topic_subscribers, topics');
  } finally {
    await sql.end({ timeout: 1 });
  }
}

interface Progress {
  status: string;
  recipients: number | null;
  created: number;
}

/** Polls GET /broadcasts/{id} every second (as the UI would) until the fan-out is done; the wall time from the 201. */
export async function waitDone(
  api: Api,
  id: string,
  since: number,
): Promise<{ seconds: number; view: Progress }> {
  for (;;) {
    const { status, body } = await api.request('GET', `/broadcasts/${id}`);
    if (status !== 200) throw new Error(`GET /broadcasts/${id}: ${status} ${JSON.stringify(body)}`);
    const view = body as Progress;
    if (view.status === 'DONE' || view.status === 'CANCELLED')
      return { seconds: (Date.now() - since) / 1000, view };
    progress(`fan-out: ${view.created.toLocaleString('en-US')} of ${view.recipients ?? '?'} made`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/**
 * A broadcast to a topic of `subscribers` recipients (LOW, inline content, sandbox): how many
 * notifications the fan-out makes a second, from the 201 to DONE (the worker drains them to
 * the sandbox meanwhile, on the same cores), and the CRITICAL p99 from acceptance to the provider
 * call for one CRITICAL every `everyMs` while it runs. SQLite: `npm start`'s one process;
 * PostgreSQL: the scale-out layout with two worker processes.
 */
export async function fanOutOn(engine: Engine, options: BenchOptions): Promise<Row[]> {
  const s = options.sizes.fanOut;
  const scenario = engine === 'sqlite' ? 'fan-out' : 'fan-out-postgres';
  const dataDir = tempDir('fan-out');
  // The SQLite file exists once Herald migrated it: start, stop, seed, start again.
  if (engine === 'sqlite') {
    const first = await deploy('sqlite', { dataDir });
    await first.stop();
    progress(`fan-out: seeding ${s.subscribers.toLocaleString('en-US')} recipients and subscribers`);
    seedSqlite(dataDir, s.subscribers);
  }
  // HERALD_DISPATCH_TRACE=<file>: each CRITICAL's stages and the worker's event-loop delay
  // (bench/urgent-trace.ts reads it).
  const trace = process.env.HERALD_DISPATCH_TRACE;
  const env = trace ? { HERALD_DISPATCH_TRACE: `${trace}.${engine}` } : undefined;
  const herald = await deploy(engine, engine === 'sqlite' ? { dataDir, env } : { workers: 2, env });
  try {
    const { api } = herald;
    if (engine === 'postgres') {
      progress(`fan-out: seeding ${s.subscribers.toLocaleString('en-US')} recipients and subscribers`);
      await seedPostgres(herald.databaseUrl as string, s.subscribers);
    }
    await requireRoute(api, 'GET', `/topics/${TOPIC}`, undefined, 'the topics API');
    const body = {
      topic: TOPIC,
      channel: 'email',
      priority: 'LOW',
      content: { subject: 'News for {{ who }}', text: 'Hello' },
      variables: { who: 'everyone' },
    };
    const since = Date.now();
    const accepted = await api.request('POST', '/broadcasts', body);
    if (accepted.status !== 201)
      throw new Error(`POST /broadcasts: ${accepted.status} ${JSON.stringify(accepted.body)}`);
    const id = (accepted.body as { broadcastId: string }).broadcastId;
    const critical =
      s.criticalMs > 0
        ? pacedCritical(herald.urls[0] as string, api.auth, s.everyMs, s.criticalMs)
        : undefined;
    const done = await waitDone(api, id, since);
    const perSecond = done.view.created / done.seconds;
    const rate = measured(
      scenario,
      `notifications created/s, a topic of ${s.subscribers.toLocaleString('en-US')}${critical ? '' : ', no CRITICAL alongside'}`,
      perSecond,
      '/s',
      {
        target:
          engine === 'sqlite'
            ? { bound: 100_000, better: 'higher', text: '>= 100,000/s' }
            : { bound: 30_000, better: 'higher', text: '>= 30,000/s' },
        note: `${done.view.created.toLocaleString('en-US')} made in ${done.seconds.toFixed(1)} s from the 201 to DONE (polled every second), the worker draining them to the sandbox meanwhile`,
      },
    );
    if (!critical) return [rate];
    const latencies = await criticalLatencies(api, await critical);
    return [
      rate,
      measured(
        scenario,
        'CRITICAL p99 during the fan-out, acceptance to provider call',
        percentile(latencies.values, 99),
        'ms',
        {
          target: { bound: 10, better: 'lower', text: '<= 10 ms' },
          note: `${latencies.values.length} CRITICAL (one every ${s.everyMs} ms for ${s.criticalMs / 1000} s from the broadcast's 201), p50 ${percentile(latencies.values, 50)} ms, max ${Math.max(...latencies.values)} ms, ${latencies.unprocessed} never processed`,
        },
      ),
    ];
  } finally {
    await herald.stop();
  }
}

export const fanOutScenario: Scenario = {
  name: 'fan-out',
  title: '12. Broadcast fan-out: a topic of 1,000,000 subscribers',
  run: (options) => fanOutOn('sqlite', options),
};

export const fanOutPostgresScenario: Scenario = {
  name: 'fan-out-postgres',
  title: '12. Broadcast fan-out on PostgreSQL, two worker processes',
  run: (options) => fanOutOn('postgres', options),
};
