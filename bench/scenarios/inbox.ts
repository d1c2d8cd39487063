import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type Api, requireRoute } from '../lib/api.ts';
import { deploy, type Engine } from '../lib/deploy.ts';
import { heldConnection, type InboxStream, openStreams, sequentialLatencies } from '../lib/inbox-streams.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { postgresNote } from '../lib/postgres.ts';
import { measured, type Row } from '../lib/report.ts';
import { percentile } from '../lib/stats.ts';
import { tempDir } from '../lib/tmp.ts';
import { dispatchOn, type Sent } from './dispatch.ts';
import { seedPostgres, seedSqlite, TOPIC } from './fan-out.ts';
import type { Scenario } from './types.ts';

const NAME = 'inbox';
const nameOn = (engine: Engine) => (engine === 'sqlite' ? NAME : `${NAME}-postgres`);
/** The recipient whose inbox GET /inbox reads: it holds `perRecipient` of the stored messages. */
const READER = 'r0000000';
const recipientId = (i: number) => `r${String(i).padStart(7, '0')}`;

/**
 * `stored` messages in inbox_messages (SQL, in the store's own file, as fan-out seeds its
 * recipients): `perRecipient` for READER, the rest spread over the other `recipients`; a third
 * of them read. One a minute apart, newest last. They belong to no notification: GET /inbox
 * reads only this table.
 */
function seedInbox(dataDir: string, stored: number, perRecipient: number, recipients: number): void {
  const db = new Database(join(dataDir, 'herald.db'));
  try {
    const now = Date.now();
    db.prepare(
      `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ? - 1)
       INSERT INTO inbox_messages (id, notification_seq, tenant, recipient_id, title, body, url, data,
         category, created_at, seen_at, read_at, archived_at)
       SELECT printf('seed-%08d', i), i + 1, 'default',
         CASE WHEN i < ? THEN ? ELSE printf('r%07d', 1 + i % (? - 1)) END,
         'Your order has shipped', 'Order ' || i || ' is on its way and should arrive on Thursday.',
         'https://shop.example/orders/' || i, NULL, NULL, ? - (? - i) * 60000,
         CASE WHEN i % 3 = 0 THEN ? END, CASE WHEN i % 3 = 0 THEN ? END, NULL
       FROM s`,
    ).run(stored, perRecipient, READER, recipients, now, stored, now, now);
  } finally {
    db.close();
  }
}

/** The same messages as seedInbox, on PostgreSQL. */
async function seedInboxPostgres(url: string, stored: number, perRecipient: number, recipients: number) {
  const { connectPostgres } = await import('../../src/store/postgres/connect.ts');
  const sql = connectPostgres(url, { max: 1 });
  try {
    const now = Date.now();
    await sql.unsafe(
      `INSERT INTO inbox_messages (id, notification_seq, tenant, recipient_id, title, body, url, data,
         category, created_at, seen_at, read_at, archived_at)
       SELECT 'seed-' || lpad(i::text, 8, '0'), i + 1, 'default',
         CASE WHEN i < $2 THEN $3 ELSE 'r' || lpad((1 + i % ($4 - 1))::text, 7, '0') END,
         'Your order has shipped', 'Order ' || i || ' is on its way and should arrive on Thursday.',
         'https://shop.example/orders/' || i, NULL, NULL, $5::bigint - ($1::bigint - i) * 60000,
         CASE WHEN i % 3 = 0 THEN $5::bigint END, CASE WHEN i % 3 = 0 THEN $5::bigint END, NULL
       FROM generate_series(0, $1 - 1) i`,
      [stored, perRecipient, READER, recipients, now],
    );
    await sql.unsafe('ANALYZE inbox_messages');
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** A recipient token for each ID (POST /recipients/{id}/token), `parallel` requests at a time. */
async function mintTokens(api: Api, ids: readonly string[], parallel = 16): Promise<string[]> {
  const tokens: string[] = new Array(ids.length);
  let next = 0;
  const minter = async () => {
    while (next < ids.length) {
      const at = next++;
      const { status, body } = await api.request('POST', `/recipients/${ids[at]}/token`);
      if (status !== 200)
        throw new Error(`POST /recipients/${ids[at]}/token: ${status} ${JSON.stringify(body)}`);
      tokens[at] = (body as { access_token: string }).access_token;
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, ids.length) }, minter));
  return tokens;
}

/** Resolves once every stream has read a message, or after `timeoutMs`. */
async function allReached(streams: readonly InboxStream[], timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until && streams.some((s) => s.firstMessageAt === undefined)) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One Herald (`npm start`'s process on SQLite; on PostgreSQL the scale-out layout with two worker
 * processes) with `streams` recipients subscribed to a topic and `stored` messages in the inbox
 * store: the RSS with every recipient's stream open against idle, one broadcast of inapp to them
 * all read off each stream, then GET /inbox for a recipient with `perRecipient` messages. On
 * PostgreSQL the streams are held by the first API process and the messages stored by the
 * workers, so each event crosses processes through the status log.
 */
async function streamsAndReads(engine: Engine, options: BenchOptions): Promise<Row[]> {
  const s = options.sizes.inbox;
  const name = nameOn(engine);
  const seeding = `${name}: seeding ${s.streams.toLocaleString('en-US')} recipients and ${s.stored.toLocaleString('en-US')} inbox messages`;
  const dataDir = tempDir('inbox');
  if (engine === 'sqlite') {
    // The SQLite file exists once Herald migrated it: start, stop, seed, start again.
    const first = await deploy('sqlite', { dataDir });
    await first.stop();
    progress(seeding);
    seedSqlite(dataDir, s.streams);
    seedInbox(dataDir, s.stored, s.perRecipient, s.streams);
  }
  const herald = await deploy(engine, engine === 'sqlite' ? { dataDir } : { workers: 2 });
  const streams: InboxStream[] = [];
  const closers: Array<() => void> = [];
  try {
    const { api } = herald;
    if (engine === 'postgres') {
      progress(seeding);
      await seedPostgres(herald.databaseUrl as string, s.streams);
      await seedInboxPostgres(herald.databaseUrl as string, s.stored, s.perRecipient, s.streams);
    }
    const url = herald.urls[0] as string;
    // The process serving `url`: SQLite's one, or PostgreSQL's first API process (after auth).
    const process = herald.processes[engine === 'sqlite' ? 0 : 1];
    await requireRoute(api, 'POST', `/recipients/${READER}/token`, undefined, 'recipient tokens');
    progress(`${name}: minting ${s.streams.toLocaleString('en-US')} recipient tokens`);
    const ids = Array.from({ length: s.streams }, (_, i) => recipientId(i));
    const tokens = await mintTokens(api, ids);
    const readerToken = tokens[0] as string;
    // Warm GET /inbox's code paths, then let the heap settle before the idle figure.
    await sequentialLatencies(url, '/inbox', readerToken, Math.min(50, s.reads));
    // The broadcast goes over a connection opened before the streams (the process's cap).
    const held = await heldConnection(url, api.auth);
    closers.push(() => held.close());
    await settle(2000);
    const idle = process?.memory()?.currentMb ?? Number.NaN;
    progress(
      `${name}: opening ${s.streams.toLocaleString('en-US')} streams (RSS idle ${idle.toFixed(1)} MB)`,
    );
    streams.push(
      ...(await openStreams(url, tokens, 200, (n) =>
        progress(`${name}: ${n.toLocaleString('en-US')} streams open`),
      )),
    );
    await settle(2000);
    const open = process?.memory()?.currentMb ?? Number.NaN;
    const perStreamKb = ((open - idle) * 1024) / s.streams;

    progress(`${name}: one broadcast of inapp to every stream's recipient`);
    const sentAt = Date.now();
    const accepted = await held.send('POST', '/broadcasts', {
      topic: TOPIC,
      channel: 'inapp',
      priority: 'NORMAL',
      content: {
        title: 'Scheduled maintenance',
        body: 'The service is read-only tonight from 22:00 to 23:00.',
      },
    });
    if (accepted.status !== 201)
      throw new Error(`POST /broadcasts: ${accepted.status} ${JSON.stringify(accepted.body)}`);
    await allReached(streams, Math.max(60_000, s.streams * 10));
    const lags = streams.flatMap((stream) =>
      stream.firstMessageAt === undefined ? [] : [stream.firstMessageAt - sentAt],
    );
    const missed = s.streams - lags.length;
    for (const stream of streams.splice(0)) stream.close();

    progress(
      `inbox: GET /inbox ×${s.reads} for a recipient with ${s.perRecipient.toLocaleString('en-US')} messages`,
    );
    const reads = await sequentialLatencies(url, '/inbox', readerToken, s.reads);
    const count = (n: number) => n.toLocaleString('en-US');
    return [
      measured(
        name,
        `${count(s.streams)} open inbox streams, one broadcast of inapp: p99 acceptance to event read`,
        percentile(lags, 99),
        'ms',
        {
          target: { bound: 1000, better: 'lower', text: '<= 1 s' },
          note: `from the POST /broadcasts request to the chunk holding the stream's first \`message\` event, read by one process holding every stream; p50 ${percentile(lags, 50)} ms, max ${Math.max(...lags)} ms, ${missed} streams never got it within the wait; ${engine === 'sqlite' ? 'SQLite, one process (auth, api, worker)' : `PostgreSQL: the streams on one API process, stored by two worker processes; ${postgresNote(2)}`}`,
        },
      ),
      measured(name, 'memory per open inbox stream (RSS open minus idle, ÷ streams)', perStreamKb, 'KB', {
        target: { bound: 20, better: 'lower', text: '<= 20 KB' },
        note: `RSS ${idle.toFixed(1)} MB idle (tokens minted, GET /inbox warmed, 2 s settled), ${open.toFixed(1)} MB with ${count(s.streams)} streams open (2 s settled); ${engine === 'sqlite' ? 'the one process of npm start (api, auth, worker)' : 'the API process holding the streams'}`,
      }),
      measured(
        name,
        `GET /inbox p99, ${count(s.perRecipient)} messages for the recipient, ${count(s.stored)} in the store`,
        percentile(reads, 99),
        'ms',
        {
          target: { bound: 5, better: 'lower', text: '<= 5 ms' },
          note: `${count(s.reads)} requests one after another on one kept-alive connection (default filter and limit), after the broadcast; p50 ${percentile(reads, 50).toFixed(2)} ms, max ${Math.max(...reads).toFixed(2)} ms`,
        },
      ),
    ];
  } finally {
    for (const stream of streams) stream.close();
    for (const close of closers) close();
    await herald.stop();
  }
}

/** `n` recipients `r0000000` on, through PUT /recipients/{id}, 16 at a time. */
async function makeRecipients(api: Api, n: number): Promise<void> {
  let next = 0;
  const maker = async () => {
    while (next < n) {
      const id = recipientId(next++);
      const { status } = await api.request('PUT', `/recipients/${id}`, { name: id });
      if (status !== 200 && status !== 201) throw new Error(`PUT /recipients/${id}: ${status}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, maker));
}

/** A batch of inapp notifications, each to one of the first 1,000 seeded recipients. */
function inappBatch(size: number, priority: string): string {
  const notifications = Array.from({ length: size }, (_, i) => ({
    channel: 'inapp',
    priority,
    recipient: { id: recipientId(i % 1000) },
    content: { title: 'Your order has shipped', body: 'It is on its way and should arrive on Thursday.' },
    metadata: { bench: true },
  }));
  return JSON.stringify({ notifications });
}

/** The drain's inapp: acceptance refuses an ID that is not a recipient of the tenant, so they are made first. */
export const inappSent: Sent = {
  batch: inappBatch,
  to: 'to the inbox',
  before: (api) => makeRecipients(api, 1000),
};

/** The dispatch scenario's drain of `dispatch` NORMAL, inapp to the inbox then email to the sandbox; their ratio. */
export async function dispatchRatio(engine: Engine, options: BenchOptions): Promise<Row[]> {
  const name = nameOn(engine);
  const sized = {
    ...options,
    sizes: { ...options.sizes, dispatch: { count: options.sizes.inbox.dispatch } },
  };
  const inbox = await dispatchOn(
    engine,
    sized,
    { name: `${name} (inapp)`, run: async () => undefined },
    inappSent,
  );
  const sandbox = await dispatchOn(engine, sized, { name: `${name} (email)`, run: async () => undefined });
  const rate = (rows: Row[]) => rows[0]?.value ?? Number.NaN;
  return [
    ...inbox,
    ...sandbox,
    measured(
      name,
      'dispatch of inapp to the inbox vs email to the sandbox',
      rate(inbox) / rate(sandbox),
      '×',
      {
        target: { bound: 1, better: 'higher', text: '>= 1.0×' },
        note: `${options.sizes.inbox.dispatch.toLocaleString('en-US')} NORMAL each, one drain after the other in this run (the dispatch scenario's method): inapp to 1,000 recipients (\`{ id }\`, resolved when claimed) vs email to an address${engine === 'postgres' ? '; PostgreSQL, two worker processes' : ''}`,
      },
    ),
  ];
}

export const inboxScenario: Scenario = {
  name: NAME,
  title: '13. In-app inbox: 10,000 open streams, a broadcast, GET /inbox, dispatch to the inbox',
  run: async (options) => [
    ...(await streamsAndReads('sqlite', options)),
    ...(await dispatchRatio('sqlite', options)),
  ],
};

export const inboxPostgresScenario: Scenario = {
  name: `${NAME}-postgres`,
  title: '13. In-app inbox on PostgreSQL: the streams on an API process, stored by two workers',
  run: async (options) => [
    ...(await streamsAndReads('postgres', options)),
    ...(await dispatchRatio('postgres', options)),
  ],
};
