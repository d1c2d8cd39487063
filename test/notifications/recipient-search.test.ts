// #49.14: admins find a notification by its exact recipient address, matched on a keyed digest
// (src/notifications/recipient-digest.ts) that every acceptance path writes; the address is
// stored nowhere new.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from 'better-sqlite3';
import { devicePush, email, notificationsApp, send, sms, webPush } from './fixtures.ts';

type T = Awaited<ReturnType<typeof notificationsApp>>;

describe('GET /notifications?recipient=', () => {
  let t: T;
  before(async () => {
    t = await notificationsApp();
  });
  after(() => t.close());

  const db = () => (t.deps.store as unknown as { db: Database }).db;
  const search = (recipient: string, headers = t.admin, extra = '') =>
    t.app.inject({
      method: 'GET',
      url: `/notifications?recipient=${encodeURIComponent(recipient)}${extra}`,
      headers,
    });
  const idsOf = async (recipient: string, headers = t.admin, extra = '') => {
    const answer = await search(recipient, headers, extra);
    assert.equal(answer.statusCode, 200, answer.body);
    return answer.json().items.map((n: { notificationId: string }) => n.notificationId);
  };
  const accept = async (headers: Record<string, string>, body: Record<string, unknown>) => {
    const answer = await send(t.app, headers, body);
    assert.equal(answer.statusCode, 201, answer.body);
    return answer.json().notificationId as string;
  };

  it('finds an admin’s tenant’s notifications to that exact address, newest first', async () => {
    const first = await accept(t.sender, email({ recipient: { email: 'ada@example.com' } }));
    await accept(t.sender, email({ recipient: { email: 'ada2@example.com' } }));
    await accept(t.sender, email({ recipient: { email: 'da@example.com' } }));
    const second = await accept(t.sender, email({ recipient: { email: 'Ada@Example.com' } }));
    assert.deepEqual(await idsOf('ada@example.com'), [second, first]);
    // An email is compared lower-cased (the local part too) and trimmed.
    assert.deepEqual(await idsOf('  ADA@Example.COM '), [second, first]);
    // With the list's filters and paging.
    assert.deepEqual(await idsOf('ada@example.com', t.admin, '&channel=sms'), []);
    const page = (await search('ada@example.com', t.admin, '&limit=1')).json();
    assert.deepEqual(
      page.items.map((n: { notificationId: string }) => n.notificationId),
      [second],
    );
    assert.deepEqual(await idsOf('ada@example.com', t.admin, `&cursor=${page.nextCursor}`), [first]);
  });

  it('finds phones in E.164 however spaced, and push targets as given', async () => {
    const phone = await accept(t.sender, sms({ recipient: { phone: '+15550104444' } }));
    await accept(t.sender, sms({ recipient: { phone: '+15550104445' } }));
    const token = 'f00dfeedf00dfeed01';
    const device = await accept(t.sender, devicePush({ recipient: { deviceToken: token, platform: 'fcm' } }));
    const web = await accept(t.sender, webPush());
    assert.deepEqual(await idsOf('+15550104444'), [phone]);
    assert.deepEqual(await idsOf('+1 (555) 010-4444'), [phone]);
    assert.deepEqual(await idsOf(token), [device]);
    assert.deepEqual(await idsOf('https://push.example.com/send/abcdef123456'), [web]);
  });

  it('never returns another tenant’s notifications to the same address', async () => {
    const ours = await accept(t.sender, email({ recipient: { email: 'shared@example.com' } }));
    const theirs = await accept(t.other, email({ recipient: { email: 'shared@example.com' } }));
    assert.deepEqual(await idsOf('shared@example.com'), [ours]);
    assert.deepEqual(await idsOf('shared@example.com', t.other), [theirs]);
    // The same address has unrelated digests in two tenants.
    const digests = db()
      .prepare('SELECT DISTINCT recipient_digest FROM notifications WHERE id IN (?, ?)')
      .pluck()
      .all(ours, theirs);
    assert.equal(digests.length, 2);
  });

  it('answers 403 problem+json to callers without the admin scope, whatever the address', async () => {
    await accept(t.sender, email({ recipient: { email: 'secret@example.com' } }));
    for (const headers of [t.sender, t.viewer]) {
      for (const address of ['secret@example.com', 'not an address']) {
        const answer = await search(address, headers);
        assert.equal(answer.statusCode, 403, answer.body);
        assert.match(answer.headers['content-type'] as string, /^application\/problem\+json/);
        assert.match(answer.json().detail, /"admin"/);
      }
    }
  });

  it('answers 400 problem+json to a malformed address', async () => {
    for (const address of [
      '',
      'ada@',
      'not an address',
      '+12',
      'short',
      'https://push.example.com/a b',
      'a b c d e f g h',
    ]) {
      const answer = await search(address);
      assert.equal(answer.statusCode, 400, `${address}: ${answer.body}`);
      assert.match(answer.headers['content-type'] as string, /^application\/problem\+json/);
      assert.equal(answer.json().errors[0].path, 'querystring/recipient');
    }
  });

  it('finds what the batch path accepted', async () => {
    const answer = await t.app.inject({
      method: 'POST',
      url: '/notifications/batch',
      headers: t.sender,
      payload: {
        notifications: [
          email({ recipient: { email: 'batch@example.com' } }),
          sms({ recipient: { phone: '+15550107777' } }),
          email({ recipient: { email: 'BATCH@example.com' } }),
        ],
      },
    });
    assert.equal(answer.statusCode, 207, answer.body);
    const [a, b, c] = answer.json().results.map((r: { notificationId: string }) => r.notificationId);
    assert.deepEqual(await idsOf('batch@example.com'), [c, a]);
    assert.deepEqual(await idsOf('+15550107777'), [b]);
  });

  it('stores the address in clear nowhere but the recipient column, as before', async () => {
    const address = 'clear.text@example.com';
    const id = await accept(t.sender, email({ recipient: { email: address } }));
    await t.app.inject({
      method: 'POST',
      url: '/notifications/batch',
      headers: t.sender,
      payload: { notifications: [email({ recipient: { email: address } })] },
    });
    assert.equal((await idsOf(address)).length, 2);
    const digest = db().prepare('SELECT recipient_digest FROM notifications WHERE id = ?').pluck().get(id);
    assert.match(digest as string, /^[A-Za-z0-9_-]{43}$/);
    // Every text value of every table, searched for the address (and its local part).
    const holding: string[] = [];
    const tables = db()
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .pluck()
      .all() as string[];
    for (const table of tables) {
      const columns = (db().prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map(
        (c) => c.name,
      );
      for (const column of columns) {
        const found = db()
          .prepare(`SELECT COUNT(*) FROM ${table} WHERE lower(CAST("${column}" AS TEXT)) LIKE '%clear.text%'`)
          .pluck()
          .get() as number;
        if (found > 0) holding.push(`${table}.${column}`);
      }
    }
    assert.deepEqual(holding, ['notifications.recipient']);
  });
});
