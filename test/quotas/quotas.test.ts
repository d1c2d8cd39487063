// Per-tenant quotas (docs/quotas.md) on SQLite and PostgreSQL, through the real API with a manual
// clock (buckets refill only when the test moves time, so every count is exact): the operator-only
// routes and their 400s, daily and per-second limits in total and per channel, the share NORMAL
// and LOW may use, batches refused item by item, a broadcast counting once, the RateLimit fields,
// the metrics; on PostgreSQL, two Herald instances with their own gates on one database together
// accept at most the burst plus the refill.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import { type Herald, startHerald } from '../../src/main.ts';
import { tokenFor } from '../helpers/auth.ts';
import { herald as cli } from '../helpers/cli.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

const NOON = Date.UTC(2026, 5, 1, 12);

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`per-tenant quotas (${kind})`, () => {
    const clock = manualClock(NOON);
    let herald: Herald;
    let env: Record<string, string>;
    let operator: string;
    let acmeAdmin: string;
    let acme: string;
    let other: string;
    /** Moves time on; the tokens are minted anew, as the old ones may have expired. */
    const moveOn = async (ms: number) => {
      clock.advance(ms);
      operator = await tokenFor(herald.deps, { role: 'admin', tenant: 'default' });
      acmeAdmin = await tokenFor(herald.deps, { role: 'admin', tenant: 'acme' });
      acme = await tokenFor(herald.deps, { role: 'sender', tenant: 'acme' });
      other = await tokenFor(herald.deps, { role: 'sender', tenant: 'other' });
    };
    before(async () => {
      env =
        kind === 'postgres'
          ? { DATABASE_URL: await (await sharedPostgres()).createDatabase('herald_quotas') }
          : {};
      herald = await startHerald(testConfig({ ...env, HERALD_ROLES: 'auth,api' }), clock);
      await moveOn(0);
    });
    after(async () => {
      await herald?.close();
      if (kind === 'postgres') await stopSharedPostgres();
    });

    const call = async (h: Herald, token: string, method: string, url: string, body?: object) => {
      const answer = await (h.api as NonNullable<Herald['api']>).inject({
        method: method as 'GET',
        url,
        headers: { authorization: `Bearer ${token}` },
        ...(body ? { payload: body } : {}),
      });
      return {
        status: answer.statusCode,
        headers: answer.headers,
        json: answer.body ? answer.json() : undefined,
      };
    };
    const api = (token: string, method: string, url: string, body?: object) =>
      call(herald, token, method, url, body);
    const email = (priority: string) => ({
      channel: 'email',
      priority,
      recipient: { email: 'ada@example.com' },
      content: { subject: 'Hi', text: 'Hello' },
    });
    const sms = (priority: string) => ({
      channel: 'sms',
      priority,
      recipient: { phone: '+15550001111' },
      content: { text: 'Hi' },
    });
    const stored = async (token: string) =>
      (await api(token, 'GET', '/notifications?limit=500')).json.items.length;

    it('lets only the operator set quotas, answers bad ones 400 and changes nothing', async () => {
      const put = (body: object, tenant = 'acme', token = operator) =>
        api(token, 'PUT', `/admin/tenants/${tenant}/quotas`, body);
      assert.equal((await put({ total: { perDay: 5 } }, 'acme', acmeAdmin)).status, 403);
      assert.equal((await api(acmeAdmin, 'GET', '/admin/quotas')).status, 403);
      for (const [body, path] of [
        [{}, 'body'],
        [{ total: { burst: 5 } }, 'body/total/burst'],
        [{ total: {} }, 'body/total'],
        [{ total: { ratePerSecond: 0 } }, 'body/total/ratePerSecond'],
        [{ total: { perDay: 1.5 } }, 'body/total/perDay'],
        [{ total: { perDay: 5 }, extra: 1 }, 'body/extra'],
        [{ channels: { fax: { perDay: 5 } } }, 'body/channels/fax'],
      ] as const) {
        const answer = await put(body);
        assert.equal(answer.status, 400, JSON.stringify(body));
        assert.match(String(answer.headers['content-type']), /application\/problem\+json/);
        assert.equal(answer.json.code, 'VALIDATION_FAILED');
        assert.ok(
          answer.json.errors.some((e: { path: string }) => e.path === path),
          `${JSON.stringify(body)}: ${JSON.stringify(answer.json.errors)}`,
        );
      }
      assert.equal((await put({ total: { perDay: 5 } }, 'Not A Tenant')).status, 400);
      assert.equal((await api(operator, 'GET', '/admin/tenants/acme/quotas')).status, 404);
      assert.deepEqual((await api(operator, 'GET', '/admin/quotas')).json, { items: [] });
    });

    it('keeps a daily limit, a quarter of it for CRITICAL and HIGH, with the RateLimit fields, storing nothing past it', async () => {
      const set = await api(operator, 'PUT', '/admin/tenants/acme/quotas', { total: { perDay: 5 } });
      assert.equal(set.status, 200);
      assert.deepEqual(set.json.total, { perDay: 5, usedToday: 0 });
      assert.equal(set.json.day, '2026-06-01');

      // NORMAL and LOW may use reserveCaps(5).bulk = 3 of the 5.
      for (let i = 0; i < 3; i++) {
        const ok = await api(acme, 'POST', '/notifications', email(i === 2 ? 'LOW' : 'NORMAL'));
        assert.equal(ok.status, 201);
        assert.equal(ok.headers['ratelimit-policy'], '"total-per-day";q=5;w=86400');
        assert.equal(ok.headers.ratelimit, `"total-per-day";r=${4 - i};t=43200`);
      }
      const refused = await api(acme, 'POST', '/notifications', email('NORMAL'));
      assert.equal(refused.status, 429);
      assert.match(String(refused.headers['content-type']), /application\/problem\+json/);
      assert.equal(refused.json.code, 'RATE_LIMITED');
      assert.equal(refused.headers['retry-after'], '43200', 'until the next UTC day');
      assert.equal(refused.headers['ratelimit-policy'], '"total-per-day";q=5;w=86400');
      assert.equal(await stored(acme), 3, 'the refused one stored nothing');

      // CRITICAL and HIGH may use it all.
      assert.equal((await api(acme, 'POST', '/notifications', email('HIGH'))).status, 201);
      assert.equal((await api(acme, 'POST', '/notifications', email('CRITICAL'))).status, 201);
      const full = await api(acme, 'POST', '/notifications', email('CRITICAL'));
      assert.equal(full.status, 429);
      assert.equal(full.headers.ratelimit, '"total-per-day";r=0;t=43200');
      assert.equal(await stored(acme), 5);

      // Another tenant is not limited, and gets no RateLimit fields.
      const free = await api(other, 'POST', '/notifications', email('LOW'));
      assert.equal(free.status, 201);
      assert.equal(free.headers.ratelimit, undefined);

      const shown = await api(operator, 'GET', '/admin/tenants/acme/quotas');
      assert.equal(shown.status, 200);
      assert.deepEqual(shown.json.total, { perDay: 5, usedToday: 5 });
      const listed = await api(operator, 'GET', '/admin/quotas');
      assert.deepEqual(
        listed.json.items.map((q: { tenant: string }) => q.tenant),
        ['acme'],
      );

      // The metrics: accepted and refused per tenant with a quota, the day's share used.
      await eventually(
        async () => {
          const text = await herald.deps.metrics.exposition();
          return (
            text.includes('herald_quota_accepted_total{tenant="acme"} 5') &&
            text.includes('herald_quota_refused_total{tenant="acme",limit="per-day"} 2') &&
            text.includes('herald_quota_daily_usage_ratio{tenant="acme",scope="total"} 1') &&
            !text.includes('tenant="other"')
          );
        },
        10_000,
        'quota metrics',
      );

      // A new UTC day counts from nothing.
      await moveOn(12 * 3600 * 1000);
      assert.equal((await api(acme, 'POST', '/notifications', email('NORMAL'))).status, 201);
      assert.equal((await api(operator, 'GET', '/admin/tenants/acme/quotas')).json.total.usedToday, 1);
    });

    it('keeps a per-second bucket per channel; a batch refuses the items past it alone; time refills it', async () => {
      const set = await api(operator, 'PUT', '/admin/tenants/acme/quotas', {
        channels: { sms: { ratePerSecond: 2, burst: 4 } },
      });
      assert.equal(set.status, 200);
      assert.deepEqual(set.json.channels, { sms: { ratePerSecond: 2, burst: 4, usedToday: 0 } });
      const before = await stored(acme);
      const batch = await api(acme, 'POST', '/notifications/batch', {
        notifications: [...Array.from({ length: 6 }, () => sms('NORMAL')), email('LOW'), { channel: 'sms' }],
      });
      assert.equal(batch.status, 207);
      const codes = batch.json.results.map(
        (r: { status?: string; error?: { code: string } }) => r.status ?? r.error?.code,
      );
      // NORMAL may use reserveCaps(4).bulk = 3 of the burst; the email is not limited; a bad item is 400 as ever.
      assert.deepEqual(codes, [
        'QUEUED',
        'QUEUED',
        'QUEUED',
        'RATE_LIMITED',
        'RATE_LIMITED',
        'RATE_LIMITED',
        'QUEUED',
        'VALIDATION_FAILED',
      ]);
      assert.equal(batch.json.results[3].error.status, 429);
      assert.equal(batch.headers['retry-after'], '1');
      assert.equal(await stored(acme), before + 4);

      assert.equal(
        (await api(acme, 'POST', '/notifications', sms('HIGH'))).status,
        201,
        'the burst’s last token is HIGH’s',
      );
      const empty = await api(acme, 'POST', '/notifications', sms('HIGH'));
      assert.equal(empty.status, 429);
      assert.equal(empty.headers['retry-after'], '1');
      assert.equal(empty.headers['ratelimit-policy'], '"sms-per-second";q=2;w=1');
      assert.equal(empty.headers.ratelimit, '"sms-per-second";r=0;t=2');
      clock.advance(1000);
      const refilled = await api(acme, 'POST', '/notifications', sms('CRITICAL'));
      assert.equal(refilled.status, 201);
      assert.equal(refilled.headers['ratelimit-policy'], '"sms-per-second";q=2;w=1');
      const shown = await api(operator, 'GET', '/admin/tenants/acme/quotas');
      assert.equal(shown.json.channels.sms.usedToday, 5);
    });

    it('counts a broadcast as one acceptance; DELETE lifts the quota', async () => {
      // The day's count goes on when a quota changes: a new day, to start from nothing.
      await moveOn(24 * 3600 * 1000);
      assert.equal(
        (await api(operator, 'PUT', '/admin/tenants/acme/quotas', { total: { perDay: 1 } })).status,
        200,
      );
      await api(acmeAdmin, 'PUT', '/recipients/r1', { email: 'r1@example.com' });
      await api(acmeAdmin, 'PUT', '/recipients/r2', { email: 'r2@example.com' });
      assert.equal((await api(acmeAdmin, 'PUT', '/topics/news', {})).status, 201);
      assert.equal(
        (await api(acmeAdmin, 'POST', '/topics/news/subscribers', { recipients: ['r1', 'r2'] })).json.added,
        2,
      );
      const body = { topic: 'news', channel: 'email', content: { subject: 'News', text: 'Hi' } };
      const first = await api(acme, 'POST', '/broadcasts', body);
      assert.equal(first.status, 201);
      assert.equal(first.headers['ratelimit-policy'], '"total-per-day";q=1;w=86400');
      assert.equal((await api(acme, 'POST', '/broadcasts', body)).status, 429);

      assert.equal((await api(operator, 'DELETE', '/admin/tenants/acme/quotas')).status, 204);
      assert.equal((await api(operator, 'DELETE', '/admin/tenants/acme/quotas')).status, 404);
      assert.equal((await api(operator, 'GET', '/admin/tenants/acme/quotas')).status, 404);
      const free = await api(acme, 'POST', '/broadcasts', body);
      assert.equal(free.status, 201);
      assert.equal(free.headers.ratelimit, undefined);
    });

    it('sets, shows and clears quotas from the CLI; the running process applies them', async () => {
      const cliEnv: Record<string, string> =
        kind === 'postgres'
          ? { DATABASE_URL: env.DATABASE_URL as string }
          : { HERALD_DATA_DIR: herald.deps.config.dataDir };
      const bad = await cli(['quotas', 'set', '--tenant', 'cli', '--rate', 'many'], cliEnv);
      assert.equal(bad.code, 2);
      assert.match(bad.err, /--rate must be a whole number/);
      const noRate = await cli(['quotas', 'set', '--tenant', 'cli', '--burst', '5'], cliEnv);
      assert.equal(noRate.code, 2);
      assert.match(noRate.err, /total\/burst: needs ratePerSecond/);
      const set = await cli(
        ['quotas', 'set', '--tenant', 'cli', '--channel', 'sms', '--per-day', '2'],
        cliEnv,
      );
      assert.equal(set.code, 0, set.err);
      assert.deepEqual(JSON.parse(set.out).channels, { sms: { perDay: 2, usedToday: 0 } });
      await eventually(
        async () => Object.keys(herald.deps.quotas.headers('cli', 'sms')).length > 0,
        5000,
        'the quota applied',
      );
      const sender = await tokenFor(herald.deps, { role: 'sender', tenant: 'cli' });
      for (const status of [201, 201, 429]) {
        assert.equal((await call(herald, sender, 'POST', '/notifications', sms('CRITICAL'))).status, status);
      }
      // The CLI reads the day of the system clock; this Herald runs on the test's.
      const got = await cli(['quotas', 'get', '--tenant', 'cli'], cliEnv);
      assert.equal(JSON.parse(got.out).channels.sms.perDay, 2);
      assert.equal((await api(operator, 'GET', '/admin/tenants/cli/quotas')).json.channels.sms.usedToday, 2);
      const cleared = await cli(['quotas', 'clear', '--tenant', 'cli', '--channel', 'sms'], cliEnv);
      assert.equal(cleared.code, 0, cleared.err);
      assert.match(cleared.out, /cli: no quota/);
      await eventually(
        async () => Object.keys(herald.deps.quotas.headers('cli', 'sms')).length === 0,
        5000,
        'the quota lifted',
      );
      assert.equal((await call(herald, sender, 'POST', '/notifications', sms('CRITICAL'))).status, 201);
    });

    if (kind === 'postgres') {
      it('holds across two instances on one database: together at most the burst, then the refill', async () => {
        const second = await startHerald(testConfig({ ...env, HERALD_ROLES: 'auth,api' }), clock);
        try {
          const set = await api(operator, 'PUT', '/admin/tenants/shared/quotas', {
            total: { ratePerSecond: 5, burst: 20 },
          });
          assert.equal(set.status, 200);
          const sender = await tokenFor(herald.deps, { role: 'sender', tenant: 'shared' });
          // The second instance reads the new quota at its next sync.
          await eventually(
            async () => Object.keys(second.deps.quotas.headers('shared')).length > 0,
            5000,
            'the second instance has the quota',
          );
          const fire = () =>
            Promise.all(
              Array.from({ length: 40 }, (_, i) =>
                call(i % 2 === 0 ? herald : second, sender, 'POST', '/notifications', email('CRITICAL')),
              ),
            );
          const count = (answers: Array<{ status: number }>) =>
            answers.filter((a) => a.status === 201).length;
          const firstRound = count(await fire());
          const accepted = await stored(sender);
          assert.ok(accepted <= 20, `${accepted} accepted, burst 20`);
          assert.ok(firstRound >= 15, `${firstRound} of the burst accepted`);
          clock.advance(1000);
          const secondRound = count(await fire());
          assert.ok((await stored(sender)) <= 25, `at most burst + 1 s of rate: ${await stored(sender)}`);
          assert.ok(secondRound >= 1);
        } finally {
          await second.close();
        }
      });
    }
  });
}
