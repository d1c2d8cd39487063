// GET /notifications/stream (docs/callbacks.md, "Live stream") against a real Herald (API and worker in one process,
// the sandbox provider), read with the `eventsource` package.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Herald, startHerald } from '../../src/main.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { openStream, type Received, rawStream, type StreamClient } from './sse-client.ts';

describe('live status stream', () => {
  let herald: Herald;
  let acme: string;
  let mallory: string;
  const clients: StreamClient[] = [];
  before(async () => {
    // A heartbeat (and token check) every 200 ms instead of 15 s, for the expiry test.
    herald = await startHerald(
      testConfig({ HERALD_ROLES: 'auth,api,worker', HERALD_STREAM_HEARTBEAT_MS: '200' }),
    );
    acme = await tokenFor(herald.deps, { role: 'sender', tenant: 'acme' });
    mallory = await tokenFor(herald.deps, { role: 'sender', tenant: 'mallory' });
  });
  after(async () => {
    for (const client of clients) client.close();
    await herald.close();
  });

  const url = (query = '') => `${herald.apiUrl}/notifications/stream${query}`;
  const open = (token: string, query = '', lastEventId?: string) => {
    const client = openStream(url(query), token, lastEventId);
    clients.push(client);
    return client;
  };

  async function send(token: string, metadata?: object): Promise<string> {
    const response = await fetch(`${herald.apiUrl}/notifications`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        channel: 'email',
        recipient: { email: 'someone@example.com' },
        content: { subject: 'Hi', text: 'Hello' },
        ...(metadata && { metadata }),
      }),
    });
    assert.equal(response.status, 201);
    return ((await response.json()) as { notificationId: string }).notificationId;
  }

  /** Waits until the client has the notification's DELIVERED change. */
  const deliveredTo = (client: StreamClient, id: string) =>
    eventually(
      () => client.received.some((r) => r.change.notificationId === id && r.change.status === 'DELIVERED'),
      15_000,
      `DELIVERED of ${id} on the stream`,
    );

  const of = (received: Received[], id: string) =>
    received
      .filter((r) => r.change.notificationId === id)
      .map((r) => `${r.change.previousStatus}>${r.change.status}`);

  /** A client that saw one notification's changes, then left: that notification and its last event. */
  async function seenThenGone(token: string): Promise<{ seen: string; lastSeen: Received }> {
    const first = open(token);
    await first.opened;
    const seen = await send(token);
    await deliveredTo(first, seen);
    const lastSeen = first.received.at(-1) as Received;
    first.close();
    return { seen, lastSeen };
  }

  /** A resumed client got each change once, none of `seen` (before its Last-Event-ID), all of `ids`. */
  function assertResumed(received: Received[], seen: string, ids: string[]): void {
    const eventIds = received.map((r) => r.id);
    assert.equal(new Set(eventIds).size, eventIds.length, 'no duplicate');
    assert.ok(
      received.every((r) => r.change.notificationId !== seen),
      'nothing from before Last-Event-ID',
    );
    for (const id of ids) {
      assert.deepEqual(of(received, id), ['QUEUED>PROCESSING', 'PROCESSING>SENT', 'SENT>DELIVERED']);
    }
  }

  it("sends each status change of the caller's notifications, in order, with the event and metadata", async () => {
    const client = open(acme);
    await client.opened;
    const id = await send(acme, { order: 'A-1' });
    await deliveredTo(client, id);
    assert.deepEqual(of(client.received, id), ['QUEUED>PROCESSING', 'PROCESSING>SENT', 'SENT>DELIVERED']);
    const sent = client.received.find((r) => r.change.notificationId === id && r.change.status === 'SENT');
    assert.deepEqual(sent?.change.metadata, { order: 'A-1' });
    assert.equal(sent?.change.event.type, 'SENT');
    assert.equal(sent?.change.event.provider, 'sandbox');
    assert.ok(!Number.isNaN(Date.parse(sent?.change.event.at ?? '')));
  });

  it('shows the metadata of a notification sent without any as {}, as GET /notifications/{id} does', async () => {
    const client = open(acme);
    await client.opened;
    const id = await send(acme);
    await deliveredTo(client, id);
    const changes = client.received.filter((r) => r.change.notificationId === id);
    assert.ok(changes.every((r) => JSON.stringify(r.change.metadata) === '{}'));
  });

  it("never shows another tenant's changes", async () => {
    const client = open(acme);
    await client.opened;
    const theirs = await send(mallory);
    const ours = await send(acme);
    await deliveredTo(client, ours);
    const own = open(mallory);
    await own.opened;
    assert.ok(client.received.every((r) => r.change.notificationId !== theirs));
    assert.ok(client.received.some((r) => r.change.notificationId === ours));
  });

  it("gives streams of one tenant the same changes, each once, beside another tenant's", async () => {
    // Tenant-wide streams of a tenant share one page of the log (src/notifications/stream-hub.ts).
    const [a1, a2, m1] = [open(acme), open(acme), open(mallory)];
    await Promise.all([a1.opened, a2.opened, m1.opened]);
    const ours = [await send(acme), await send(acme)];
    const theirs = await send(mallory);
    const last = await send(acme);
    await Promise.all([deliveredTo(a1, last), deliveredTo(a2, last), deliveredTo(m1, theirs)]);
    const ids = (client: StreamClient) => client.received.map((r) => r.id);
    assert.deepEqual(ids(a2), ids(a1));
    assert.equal(new Set(ids(a1)).size, ids(a1).length, 'a change was sent twice');
    for (const id of [...ours, last]) {
      assert.deepEqual(of(a1.received, id), ['QUEUED>PROCESSING', 'PROCESSING>SENT', 'SENT>DELIVERED']);
    }
    assert.ok(a1.received.every((r) => r.change.notificationId !== theirs));
    assert.deepEqual(of(m1.received, theirs), ['QUEUED>PROCESSING', 'PROCESSING>SENT', 'SENT>DELIVERED']);
    assert.ok(m1.received.every((r) => ![...ours, last].includes(r.change.notificationId)));
  });

  it('narrows to the notifications named with ?notificationId=', async () => {
    const first = await send(acme);
    const second = await send(acme);
    // Both were accepted before the stream opened: resume from before them to see all of it.
    const client = open(acme, `?notificationId=${second}`);
    await client.opened;
    const third = await send(acme);
    const everything = open(acme);
    await everything.opened;
    const fourth = await send(acme);
    await deliveredTo(everything, fourth);
    assert.ok(client.received.every((r) => r.change.notificationId === second));
    assert.ok(
      ![first, third, fourth].some((id) => client.received.some((r) => r.change.notificationId === id)),
    );
  });

  it("answers 404 to a notificationId that is not one of the tenant's, as GET /notifications/{id} does", async () => {
    const ours = await send(acme);
    const theirs = await send(mallory);
    const get = (query: string) => fetch(url(query), { headers: { authorization: `Bearer ${acme}` } });
    for (const query of [
      `?notificationId=${theirs}`,
      '?notificationId=no-such-id',
      `?notificationId=${ours}&notificationId=${theirs}`,
    ]) {
      const refused = await get(query);
      assert.equal(refused.status, 404, query);
      assert.equal((await refused.json()).code, 'NOT_FOUND');
    }
    const many = await get(`?notificationId=${ours}&notificationId=${theirs}`);
    assert.match((await many.json()).detail, /notificationId number 2 of 2/);
    const client = open(acme, `?notificationId=${ours}`);
    await client.opened;
  });

  it('replays what a dropped client missed after its Last-Event-ID, with no gap and no duplicate', async () => {
    const { seen, lastSeen } = await seenThenGone(acme);
    // Changes while the client is away.
    const b = await send(acme);
    const c = await send(acme);
    const watcher = open(acme);
    await watcher.opened;
    await deliveredTo(watcher, c);
    await eventually(
      () => watcher.received.some((r) => r.change.notificationId === b && r.change.status === 'DELIVERED'),
      15_000,
      'b delivered',
    );
    const resumed = open(acme, '', lastSeen.id);
    await resumed.opened;
    await deliveredTo(resumed, c);
    const d = await send(acme);
    await deliveredTo(resumed, d);
    assertResumed(resumed.received, seen, [b, c, d]);
  });

  it('catches up a client far behind (more than the 4 MiB a live stream may lag) at its own pace, each change once, then goes live', async () => {
    const { seen, lastSeen } = await seenThenGone(acme);
    // About 5.5 MB of changes while the client is away: 800 notifications, 2 KB of metadata each.
    const watcher = open(acme);
    await watcher.opened;
    const bulky = { note: 'x'.repeat(2048) };
    const missed: string[] = [];
    for (let i = 0; i < 8; i++) {
      const response = await fetch(`${herald.apiUrl}/notifications/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${acme}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          notifications: Array.from({ length: 100 }, () => ({
            channel: 'email',
            recipient: { email: 'someone@example.com' },
            content: { subject: 'Hi', text: 'Hello' },
            metadata: bulky,
          })),
        }),
      });
      assert.equal(response.status, 207);
      const { results } = (await response.json()) as { results: Array<{ notificationId: string }> };
      missed.push(...results.map((r) => r.notificationId));
    }
    const wanted = new Set(missed);
    await eventually(
      () =>
        watcher.received.filter((r) => wanted.has(r.change.notificationId) && r.change.status === 'DELIVERED')
          .length === missed.length,
      30_000,
      'the 800 delivered',
    );
    // The client comes back and does not read for a second: what it missed waits for it, a page
    // at a time, instead of piling up in the server until the stream is cut.
    const resumed = await rawStream(url(), acme, lastSeen.id, 1000);
    await eventually(() => resumed.events().length >= missed.length * 3, 30_000, 'the missed changes');
    const later = await send(acme);
    await eventually(
      () =>
        resumed.events().some((r) => r.change.notificationId === later && r.change.status === 'DELIVERED'),
      15_000,
      'a live change after the catch-up',
    );
    resumed.close();
    assert.equal(resumed.closedByServer(), false, 'the server never cut the stream');
    assertResumed(resumed.events(), seen, [...missed, later]);
  });

  it('ends a stream once its access token has expired (a reconnect with it gets 401), and only that one', async () => {
    // Its exp is 25 s ago: accepted for 4 to 5 s more, within the 30 s clock tolerance (exp counts
    // whole seconds, so a margin of one second could be gone before the stream opens on a slow machine).
    const expiring = await tokenFor(herald.deps, { role: 'sender', tenant: 'acme', ttl: -25 });
    const ending = await rawStream(url(), expiring, undefined, 0);
    const lasting = await rawStream(url(), acme, undefined, 0);
    try {
      await eventually(() => ending.closedByServer(), 15_000, "the expired token's stream ended");
      const again = await fetch(url(), { headers: { authorization: `Bearer ${expiring}` } });
      assert.equal(again.status, 401);
      await again.body?.cancel();
      assert.equal(lasting.closedByServer(), false, 'a stream of a valid token stays open');
      const id = await send(acme);
      await eventually(
        () => lasting.events().some((r) => r.change.notificationId === id && r.change.status === 'DELIVERED'),
        15_000,
        'DELIVERED on the stream of the valid token',
      );
    } finally {
      ending.close();
      lasting.close();
    }
  });

  it('refuses a Last-Event-ID it never sent, and a caller without notifications:read', async () => {
    const bad = await fetch(url(), { headers: { authorization: `Bearer ${acme}`, 'last-event-id': 'nope' } });
    assert.equal(bad.status, 400);
    assert.match(bad.headers.get('content-type') ?? '', /problem\+json/);
    // Well formed but past the end of the log (a client of a database since restored or wiped):
    // taken as a floor, it would have hidden every change until the log got there.
    const head = Number(await herald.deps.store.statusLog.head());
    const ahead = await fetch(url(), {
      headers: { authorization: `Bearer ${acme}`, 'last-event-id': String(head + 1000) },
    });
    assert.equal(ahead.status, 400);
    assert.equal((await ahead.json()).code, 'VALIDATION_FAILED');
    const none = await fetch(url());
    assert.equal(none.status, 401);
    const noScope = await tokenFor(herald.deps, { tenant: 'acme', scopes: ['notifications:write'] });
    const forbidden = await fetch(url(), { headers: { authorization: `Bearer ${noScope}` } });
    assert.equal(forbidden.status, 403);
  });
});

describe('live status streams per tenant (HERALD_STREAMS_PER_TENANT)', () => {
  let herald: Herald;
  const held: AbortController[] = [];
  before(async () => {
    herald = await startHerald(testConfig({ HERALD_ROLES: 'auth,api', HERALD_STREAMS_PER_TENANT: '2' }));
  });
  after(async () => {
    for (const controller of held) controller.abort();
    await herald.close();
  });

  /** Opens a stream and keeps it open; resolves with its status (and the answer, when refused). */
  async function connect(token: string): Promise<{ status: number; response: Response; stop: () => void }> {
    const controller = new AbortController();
    held.push(controller);
    const response = await fetch(`${herald.apiUrl}/notifications/stream`, {
      headers: { authorization: `Bearer ${token}` },
      signal: controller.signal,
    });
    if (response.status === 200) await response.body?.getReader().read();
    return { status: response.status, response, stop: () => controller.abort() };
  }

  it("refuses a tenant's stream past its cap with 429, and no other tenant's", async () => {
    const acme = await tokenFor(herald.deps, { role: 'sender', tenant: 'acme' });
    const other = await tokenFor(herald.deps, { role: 'sender', tenant: 'other' });
    const first = await connect(acme);
    assert.equal(first.status, 200);
    assert.equal((await connect(acme)).status, 200);
    for (let i = 0; i < 2; i += 1) {
      const refused = await connect(acme);
      assert.equal(refused.status, 429);
      assert.match(refused.response.headers.get('content-type') ?? '', /problem\+json/);
      assert.equal(refused.response.headers.get('retry-after'), '5');
      assert.equal(((await refused.response.json()) as { code: string }).code, 'RATE_LIMITED');
    }
    assert.equal((await connect(other)).status, 200);
    // A closed stream frees its place (the server sees the close a moment later); refusals took none.
    first.stop();
    await eventually(async () => (await connect(acme)).status === 200, 5_000, 'a stream after one closed');
    assert.equal((await connect(acme)).status, 429);
  });
});
