// Across processes on PostgreSQL (docs/inbox-api.md, "The live stream"): an `inapp` message
// stored by a worker process (a real `node bin/herald.js start`, role worker) reaches an inbox
// stream held by another process serving the API (this one, roles auth and api, no worker); and
// an unread or unarchive served by a second api process reaches it with the new counts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHeraldClient, type InboxEvent } from '../../clients/typescript/src/index.ts';
import { type Herald, startHerald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import { tokenFor } from '../helpers/auth.ts';
import { tempDir, testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { type HeraldProcess, startHeraldProcess } from '../helpers/herald-process.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

describe('inbox stream across processes (PostgreSQL)', () => {
  let api: Herald;
  let other: Herald | undefined;
  let worker: HeraldProcess | undefined;
  const abort = new AbortController();
  before(async () => {
    const url = await (await sharedPostgres()).createDatabase('herald_inbox_processes');
    api = await startHerald(testConfig({ DATABASE_URL: url, HERALD_ROLES: 'auth,api' }));
    other = await startHerald(testConfig({ DATABASE_URL: url, HERALD_ROLES: 'auth,api' }));
    worker = await startHeraldProcess('worker', {
      DATABASE_URL: url,
      HERALD_ROLES: 'worker',
      HERALD_DATA_DIR: tempDir(),
      HERALD_POLL_MS: '100',
      LOG_LEVEL: 'warn',
    });
  });
  after(async () => {
    abort.abort();
    await worker?.stop();
    await other?.close();
    await api?.close();
    await stopSharedPostgres();
  });

  it('delivers a message stored by the worker process to the stream on the api process', async () => {
    const admin = await tokenFor(api.deps, { role: 'admin' });
    const call = (method: string, path: string, body?: object) =>
      apiCall(api.apiUrl as string, admin, method, path, body);
    assert.equal((await call('PUT', '/recipients/ada', { email: 'ada@example.com' })).status, 201);
    const minted = await call('POST', '/recipients/ada/token');
    const client = createHeraldClient({
      baseUrl: api.apiUrl as string,
      credentials: { accessToken: minted.json.access_token },
    });
    const events: InboxEvent[] = [];
    void (async () => {
      for await (const event of client.inbox.stream({ signal: abort.signal })) events.push(event);
    })().catch(() => undefined);
    await eventually(() => events.length > 0, 10_000, 'the first counts');

    const accepted = await call('POST', '/notifications', {
      channel: 'inapp',
      recipient: { id: 'ada' },
      content: { title: 'From the worker', body: 'Stored by another process' },
    });
    assert.equal(accepted.status, 201, JSON.stringify(accepted.json));
    await eventually(
      () => events.some((e) => e.type === 'message' && e.item.id === accepted.json.notificationId),
      20_000,
      `the message on the stream (worker output: ${worker?.output()})`,
    );
    await eventually(
      () => events.some((e) => e.type === 'counts' && e.counts.unread === 1),
      10_000,
      'counts',
    );
    // Read on the api process: the READ event, committed there, comes back through the log.
    const id = accepted.json.notificationId;
    assert.equal((await client.inbox.act(id, 'read')).id, id);
    await eventually(
      () =>
        events.at(-1)?.type === 'counts' &&
        (events.at(-1) as { counts: { unread: number } }).counts.unread === 0,
    );

    // unread and unarchive on the other api process: no event of the contract, yet the stream
    // here gets the new counts (INBOX_COUNTS in the log), not only with the recipient's next event.
    const elsewhere = createHeraldClient({
      baseUrl: other?.apiUrl as string,
      credentials: { accessToken: minted.json.access_token },
    });
    const lastCounts = () => {
      const last = events.findLast((e) => e.type === 'counts');
      return last?.type === 'counts' ? last.counts : undefined;
    };
    assert.equal((await elsewhere.inbox.act(id, 'unread')).readAt, null);
    await eventually(() => lastCounts()?.unread === 1, 10_000, 'counts after unread elsewhere');
    await elsewhere.inbox.act(id, 'archive');
    await eventually(() => lastCounts()?.unread === 0, 10_000, 'counts after archive elsewhere');
    assert.equal((await elsewhere.inbox.act(id, 'unarchive')).archivedAt, null);
    await eventually(() => lastCounts()?.unread === 1, 10_000, 'counts after unarchive elsewhere');
    // Reported by nothing else: the notification's events are its statuses and SEEN/READ/ARCHIVED.
    const detail = await call('GET', `/notifications/${id}`);
    assert.deepEqual(
      detail.json.events.map((e: { type: string }) => e.type),
      ['QUEUED', 'PROCESSING', 'DELIVERED', 'SEEN', 'READ', 'ARCHIVED'],
    );
  });
});
