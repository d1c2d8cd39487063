// Migration 200 (#46.3: a user is a tenant and an email) on a database made by the migrations up
// to 190 with users in it: every user is kept as it was, on SQLite and on PostgreSQL, and the
// same email may then be a user of another tenant.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { localTurn } from '../../src/auth/argon2-gate.ts';
import { passwordUser } from '../../src/auth/password-login.ts';
import { hashSecret } from '../../src/auth/passwords.ts';
import type { Store } from '../../src/store/port/index.ts';
import { connectPostgres } from '../../src/store/postgres/connect.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

const T0 = Date.UTC(2026, 0, 1);
const PASSWORD = 'an old password kept';

/** The migration files before 200, in order, of one adapter. */
const before200 = (adapter: string) => {
  const dir = new URL(`../../src/store/${adapter}/migrations/`, import.meta.url);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.sql') && name < '200')
    .sort()
    .map((name) => ({ name, text: readFileSync(new URL(name, dir), 'utf8') }));
};

/** The rows a database at 190 holds: two tenants, three users, one signed out everywhere, one link. */
const seed = (hash: string) => [
  "INSERT INTO tenants (name, created_at) VALUES ('default', 1), ('acme', 2)",
  `INSERT INTO users (id, email, password_hash, role, tenant, disabled, created_at, sessions_valid_after) VALUES
     ('usr_a', 'ada@example.com', '${hash}', 'admin', 'default', 0, ${T0}, NULL),
     ('usr_b', 'cfo@globex.test', '${hash}', 'sender', 'acme', 0, ${T0 + 1}, ${T0 + 500}),
     ('usr_c', 'off@example.com', '${hash}', 'viewer', 'acme', 1, ${T0 + 2}, NULL)`,
  `INSERT INTO user_identities (issuer, subject, user_id, linked_at) VALUES ('https://idp', 'sub-a', 'usr_a', ${T0})`,
];

async function assertKept(store: Store, hash: string): Promise<void> {
  const users = await store.auth.listUsers();
  assert.deepEqual(
    users.map((u) => [u.id, u.email, u.role, u.tenant, u.disabled, u.createdAt, u.sessionsValidAfter]),
    [
      ['usr_a', 'ada@example.com', 'admin', 'default', false, T0, null],
      ['usr_b', 'cfo@globex.test', 'sender', 'acme', false, T0 + 1, T0 + 500],
      ['usr_c', 'off@example.com', 'viewer', 'acme', true, T0 + 2, null],
    ],
  );
  assert.ok(users.every((u) => u.passwordHash === hash));
  assert.equal((await store.auth.findUserByIdentity('https://idp', 'sub-a'))?.id, 'usr_a');
  // The old password still signs in; the same email may now be a user of another tenant.
  assert.equal(
    (
      await passwordUser(store.auth, {
        email: 'cfo@globex.test',
        password: PASSWORD,
        turn: localTurn('default'),
      })
    )?.id,
    'usr_b',
  );
  await store.auth.ensureTenant('globex', T0);
  await store.auth.createUser({
    id: 'usr_d',
    email: 'cfo@globex.test',
    passwordHash: hash,
    role: 'admin',
    tenant: 'globex',
    disabled: false,
    createdAt: T0 + 3,
    sessionsValidAfter: null,
  });
  assert.deepEqual(
    (await store.auth.findUsersByEmail('cfo@globex.test', 4)).map((u) => u.tenant),
    ['acme', 'globex'],
  );
}

describe('migration 200: users per tenant keeps every user', () => {
  after(stopSharedPostgres);

  it('on SQLite', async () => {
    const hash = await hashSecret(PASSWORD, localTurn('default'));
    const dir = tempDir();
    const db = new Database(join(dir, 'herald.db'));
    db.exec('CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)');
    for (const { name, text } of before200('sqlite')) {
      db.exec(text);
      db.prepare('INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)').run(name, T0);
    }
    for (const statement of seed(hash)) db.exec(statement);
    db.close();
    const store = createSqliteStore(dir);
    try {
      await assertKept(store, hash);
    } finally {
      await store.close();
    }
  });

  it('on PostgreSQL', async () => {
    const hash = await hashSecret(PASSWORD, localTurn('default'));
    const server = await sharedPostgres();
    const url = await server.createDatabase('herald_users_200');
    const sql = connectPostgres(url, { max: 1 });
    try {
      await sql`CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)`;
      for (const { name, text } of before200('postgres')) {
        await sql.unsafe(text);
        await sql`INSERT INTO schema_migrations (name, applied_at) VALUES (${name}, ${T0})`;
      }
      for (const statement of seed(hash)) await sql.unsafe(statement);
    } finally {
      await sql.end({ timeout: 5 });
    }
    const store = await createPostgresStore(url, { max: 2 });
    try {
      await assertKept(store, hash);
    } finally {
      await store.close();
    }
  });
});
