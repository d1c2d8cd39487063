// #49.1: a command run in a second terminal says which store it used, and the first start's hint
// carries the server's own store, so the first admin lands where the server reads it.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../helpers/config.ts';
import { passwordLogin, runHerald, startHeraldProcess } from '../helpers/herald-process.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

const ADMIN = ['--email', 'first@example.com', '--password', 'a long enough passphrase', '--role', 'admin'];

describe('which store a command used', () => {
  after(() => stopSharedPostgres());

  it('names the SQLite file of every store command', async () => {
    const dir = tempDir();
    const file = join(dir, 'herald.db');
    const env = { HERALD_DATA_DIR: dir, LOG_LEVEL: 'silent' };
    const add = await runHerald(['users', 'add', ...ADMIN], env);
    assert.equal(add.code, 0, add.output);
    assert.ok(add.output.includes(`Store: SQLite database ${file}\n`), add.output);
    for (const args of [['users', 'list'], ['clients', 'list'], ['keys', 'list'], ['queues']]) {
      const result = await runHerald(args, env);
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.output}`);
      assert.ok(
        result.output.includes(`Store: SQLite database ${file}\n`),
        `${args.join(' ')}: ${result.output}`,
      );
    }
  });

  it('names the PostgreSQL host and database, never the password', async () => {
    const url = await (await sharedPostgres()).createDatabase('which_store');
    const parsed = new URL(url);
    const result = await runHerald(['users', 'list'], { DATABASE_URL: url, LOG_LEVEL: 'silent' });
    assert.equal(result.code, 0, result.output);
    const database = parsed.pathname.slice(1);
    assert.ok(
      result.output.includes(`Store: PostgreSQL database ${database} at ${parsed.username}@${parsed.host}\n`),
      result.output,
    );
    if (parsed.password) assert.ok(!result.output.includes(parsed.password), 'the password stays out');
  });

  it('hints with the server’s HERALD_DATA_DIR; the hinted command makes sign-in work', async () => {
    const dir = tempDir('herald test dir ');
    const herald = await startHeraldProcess('first run', {
      HERALD_HOST: '127.0.0.1',
      HERALD_API_PORT: '0',
      HERALD_ROLES: 'auth,api',
      HERALD_DATA_DIR: dir,
      LOG_LEVEL: 'warn',
    });
    try {
      const api = herald.apiUrl as string;
      const setup = async () => (await (await fetch(`${api}/auth/setup`)).json()) as { setupNeeded: boolean };
      assert.deepEqual(await setup(), { setupNeeded: true });
      const hint = /^ {2}HERALD_DATA_DIR='([^']+)' npm run herald -- users add /m.exec(herald.output());
      assert.ok(hint, herald.output());
      assert.equal(hint[1], dir);
      // The command run as hinted, from another directory's point of view: the same store.
      const add = await runHerald(['users', 'add', ...ADMIN], { HERALD_DATA_DIR: hint[1] as string });
      assert.equal(add.code, 0, add.output);
      await passwordLogin(api, { email: 'first@example.com', password: 'a long enough passphrase' });
      assert.deepEqual(await setup(), { setupNeeded: false });
    } finally {
      await herald.stop();
    }
  });
});
