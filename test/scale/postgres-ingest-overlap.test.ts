// On PostgreSQL an `api` process's group commits overlap (docs/scale-out.md): one commit held up
// does not hold the requests that came after it. Here a transaction of another connection holds
// an Idempotency-Key uncommitted, so the request reusing that key waits in its commit for the
// other transaction's outcome; a request without a key, sent meanwhile, must get its 201 while
// the first still waits. With one commit at a time it would wait for the first.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { connectPostgres, type Sql } from '../../src/store/postgres/connect.ts';
import { tempDir } from '../helpers/config.ts';
import { secondWhileKeyHeld } from '../helpers/held-key.ts';
import { type HeraldProcess, passwordLogin, startHeraldProcess } from '../helpers/herald-process.ts';
import { type PostgresServer, sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

const ADMIN = { email: 'admin@example.com', password: 'ingest-overlap-test-password-1' };
const HELD_KEY = 'held-by-another-transaction';

describe('ingest on PostgreSQL: a commit held up does not hold the next', () => {
  let server: PostgresServer | undefined;
  let sql: Sql | undefined;
  let api: HeraldProcess | undefined;
  after(async () => {
    await api?.stop(5000);
    await sql?.end({ timeout: 1 });
    await stopSharedPostgres();
  });

  it('answers a second request while the first waits for another transaction', async () => {
    server = await sharedPostgres();
    const url = await server.createDatabase('herald_ingest_overlap');
    api = await startHeraldProcess('ingest-overlap-api', {
      DATABASE_URL: url,
      HERALD_ROLES: 'auth,api',
      HERALD_JWT_ISSUER: 'http://herald.test',
      HERALD_HOST: '127.0.0.1',
      HERALD_API_PORT: '0',
      HERALD_DATA_DIR: tempDir('herald-ingest-overlap-'),
      HERALD_ADMIN_EMAIL: ADMIN.email,
      HERALD_ADMIN_PASSWORD: ADMIN.password,
      LOG_LEVEL: 'warn',
    });
    const base = api.apiUrl as string;
    const token = await passwordLogin(base, ADMIN);
    const post = (to: string, key?: string) =>
      fetch(`${base}/notifications`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          ...(key === undefined ? {} : { 'idempotency-key': key }),
        },
        body: JSON.stringify({
          channel: 'email',
          recipient: { email: to },
          content: { subject: 'Hi', text: 'Hello' },
        }),
      });
    const first = await post('ada@example.com');
    assert.equal(first.status, 201, await first.clone().text());
    const { notificationId: model } = (await first.json()) as { notificationId: string };

    // Another connection copies that row under the key, and keeps its transaction open.
    sql = connectPostgres(url, { max: 2 });
    const { second, keyed } = await secondWhileKeyHeld(
      sql,
      'notifications',
      model,
      HELD_KEY,
      () => post('grace@example.com', HELD_KEY),
      () => post('lin@example.com'),
    );
    assert.notEqual(second, 'held', 'the second request waited for the first one’s commit');
    assert.equal((second as Response).status, 201);
    assert.equal(
      keyed.status,
      201,
      'the key was never committed by the other transaction: a new notification',
    );
    const [{ n }] = await sql<[{ n: number }]>`SELECT count(*)::int AS n FROM notifications`;
    assert.equal(n, 3);
  });
});
