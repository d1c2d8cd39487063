import {
  blockingAttempt,
  type ClientRow,
  type KeyRow,
  toClient,
  toKey,
  toUser,
  type UserRow,
} from '../auth-rows.ts';
import { type AuthStore, DuplicateError, type SigningKeyRecord } from '../port/auth.ts';
import type { Query, Sql } from './connect.ts';
import { isUniqueViolation } from './errors.ts';

/**
 * The PostgreSQL implementation of the auth port. Keys and the throttled attempts live here so
 * every auth instance signs with the same key and throttles on the same counts.
 */
export function createPostgresAuthStore(sql: Sql): AuthStore {
  const insertKey = (q: Query, key: SigningKeyRecord) => q`
    INSERT INTO signing_keys (kid, alg, public_jwk, private_jwk, state, created_at, retired_at, publish_until)
    VALUES (${key.kid}, ${key.alg}, ${key.publicJwk}, ${key.privateJwk}, 'active', ${key.createdAt}, NULL, NULL)`;
  return {
    async listSigningKeys() {
      return (await sql<KeyRow[]>`SELECT * FROM signing_keys ORDER BY created_at`).map(toKey);
    },
    async insertFirstSigningKey(key) {
      // ON CONFLICT on the one-active partial index: a concurrent instance's key wins quietly.
      const rows = await sql`
        INSERT INTO signing_keys (kid, alg, public_jwk, private_jwk, state, created_at)
        VALUES (${key.kid}, ${key.alg}, ${key.publicJwk}, ${key.privateJwk}, 'active', ${key.createdAt})
        ON CONFLICT DO NOTHING RETURNING kid`;
      return rows.length > 0;
    },
    async rotateSigningKey(key, retiredAt, publishUntil) {
      await sql.begin(async (tx) => {
        await tx`UPDATE signing_keys SET state = 'retired', retired_at = ${retiredAt},
                 publish_until = ${publishUntil} WHERE state = 'active'`;
        await insertKey(tx, key);
      });
    },
    async deleteExpiredSigningKeys(now) {
      const rows = await sql<{ kid: string }[]>`
        DELETE FROM signing_keys WHERE state = 'retired' AND publish_until < ${now} RETURNING kid`;
      return rows.map((row) => row.kid);
    },
    async deleteSigningKey(kid) {
      return (await sql`DELETE FROM signing_keys WHERE kid = ${kid}`).count > 0;
    },
    async ensureTenant(name, now) {
      await sql`INSERT INTO tenants (name, created_at) VALUES (${name}, ${now}) ON CONFLICT (name) DO NOTHING`;
    },
    async createUser(u) {
      try {
        await sql`INSERT INTO users (id, email, password_hash, role, tenant, disabled, created_at)
          VALUES (${u.id}, ${u.email}, ${u.passwordHash}, ${u.role}, ${u.tenant}, ${u.disabled ? 1 : 0}, ${u.createdAt})`;
      } catch (error) {
        if (isUniqueViolation(error)) throw new DuplicateError('A user with this email in this tenant');
        throw error;
      }
    },
    async findUserByEmail(email, tenant) {
      const [row] = await sql<UserRow[]>`SELECT * FROM users WHERE email = ${email} AND tenant = ${tenant}`;
      return row && toUser(row);
    },
    async findUsersByEmail(email, limit) {
      const rows = await sql<UserRow[]>`SELECT * FROM users WHERE email = ${email}
        ORDER BY created_at, id LIMIT ${limit}`;
      return rows.map(toUser);
    },
    async findUserById(id) {
      const [row] = await sql<UserRow[]>`SELECT * FROM users WHERE id = ${id}`;
      return row && toUser(row);
    },
    async listUsers(tenant) {
      const rows = tenant
        ? await sql<UserRow[]>`SELECT * FROM users WHERE tenant = ${tenant} ORDER BY created_at, id`
        : await sql<UserRow[]>`SELECT * FROM users ORDER BY created_at, id`;
      return rows.map(toUser);
    },
    async hasUsers() {
      return (await sql`SELECT 1 FROM users LIMIT 1`).length > 0;
    },
    async findUserByIdentity(issuer, subject) {
      const [row] = await sql<UserRow[]>`SELECT users.* FROM user_identities
        JOIN users ON users.id = user_identities.user_id
        WHERE user_identities.issuer = ${issuer} AND user_identities.subject = ${subject}`;
      return row ? toUser(row) : undefined;
    },
    async linkIdentity(issuer, subject, userId, now) {
      const added = await sql`INSERT INTO user_identities (issuer, subject, user_id, linked_at)
        VALUES (${issuer}, ${subject}, ${userId}, ${now}) ON CONFLICT DO NOTHING`;
      return added.count > 0;
    },
    async unlinkIdentity(issuer, subject) {
      await sql`DELETE FROM user_identities WHERE issuer = ${issuer} AND subject = ${subject}`;
    },
    async revokeSessions(id, at) {
      return (await sql`UPDATE users SET sessions_valid_after = ${at} WHERE id = ${id}`).count > 0;
    },
    async setUserPassword(id, passwordHash, at) {
      await sql`UPDATE users SET password_hash = ${passwordHash}, sessions_valid_after = ${at} WHERE id = ${id}`;
    },
    async setClientDisabled(id, disabled) {
      return (await sql`UPDATE clients SET disabled = ${disabled ? 1 : 0} WHERE id = ${id}`).count > 0;
    },
    async setUserDisabled(id, disabled) {
      return (await sql`UPDATE users SET disabled = ${disabled ? 1 : 0} WHERE id = ${id}`).count > 0;
    },
    async createClient(c) {
      await sql`INSERT INTO clients (id, name, secret_hash, scopes, tenant, disabled, created_at)
        VALUES (${c.id}, ${c.name}, ${c.secretHash}, ${c.scopes.join(' ')}, ${c.tenant}, ${c.disabled ? 1 : 0}, ${c.createdAt})`;
    },
    async findClient(id) {
      const [row] = await sql<ClientRow[]>`SELECT * FROM clients WHERE id = ${id}`;
      return row && toClient(row);
    },
    async listClients(tenant) {
      const rows = tenant
        ? await sql<ClientRow[]>`SELECT * FROM clients WHERE tenant = ${tenant} ORDER BY created_at, id`
        : await sql<ClientRow[]>`SELECT * FROM clients ORDER BY created_at, id`;
      return rows.map(toClient);
    },
    async setSigningKeyPrivate(kid, privateJwk) {
      await sql`UPDATE signing_keys SET private_jwk = ${privateJwk} WHERE kid = ${kid}`;
    },
    async setServerSecret(name, value) {
      await sql`UPDATE server_secrets SET value = ${value} WHERE name = ${name}`;
    },
    async setClientSecret(id, secretHash) {
      await sql`UPDATE clients SET secret_hash = ${secretHash} WHERE id = ${id}`;
    },
    async serverSecret(name, value, now) {
      await sql`INSERT INTO server_secrets (name, value, created_at) VALUES (${name}, ${value}, ${now})
        ON CONFLICT DO NOTHING`;
      const [row] = await sql<{ value: string }[]>`SELECT value FROM server_secrets WHERE name = ${name}`;
      return row?.value as string;
    },
    claimAttempt: (a) =>
      sql.begin(async (tx) => {
        // Both keys locked, always in the same order, for this transaction: a second instance
        // claiming for the same subject or address waits here until this one has committed.
        for (const key of [`${a.scope}:s:${a.subject}`, `${a.scope}:a:${a.address}`].sort()) {
          await tx`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`;
        }
        const times = (rows: { at: string | number }[]) => rows.map((row) => Number(row.at));
        const blockedBy = blockingAttempt(
          times(
            await tx`SELECT at FROM auth_attempts WHERE scope = ${a.scope} AND subject = ${a.subject}
            AND at > ${a.since} ORDER BY at DESC LIMIT ${a.limits.subject}`,
          ),
          times(
            await tx`SELECT at FROM auth_attempts WHERE scope = ${a.scope} AND address = ${a.address}
            AND at > ${a.since} ORDER BY at DESC LIMIT ${a.limits.address}`,
          ),
          a.limits,
        );
        if (blockedBy !== undefined) return { blockedBy };
        const [row] = await tx<{ id: string }[]>`INSERT INTO auth_attempts (scope, subject, address, at)
          VALUES (${a.scope}, ${a.subject}, ${a.address}, ${a.now}) RETURNING id`;
        return { id: Number(row?.id) };
      }),
    async dropAttempt(id) {
      await sql`DELETE FROM auth_attempts WHERE id = ${id}`;
    },
    async pruneAttempts(before) {
      await sql`DELETE FROM auth_attempts WHERE at < ${before}`;
    },
  };
}
