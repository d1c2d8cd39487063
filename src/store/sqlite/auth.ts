import {
  blockingAttempt,
  type ClientRow,
  type KeyRow,
  toClient,
  toKey,
  toUser,
  type UserRow,
} from '../auth-rows.ts';
import { type AttemptClaim, type AuthStore, DuplicateError, type SigningKeyRecord } from '../port/auth.ts';
import type { SqliteDb } from './open.ts';

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code?.startsWith('SQLITE_CONSTRAINT') === true;
}

/** The SQLite implementation of the auth port. */
export function createSqliteAuthStore(db: SqliteDb): AuthStore {
  const insertKey = db.prepare(
    `INSERT INTO signing_keys (kid, alg, public_jwk, private_jwk, state, created_at, retired_at, publish_until)
     VALUES (@kid, @alg, @publicJwk, @privateJwk, 'active', @createdAt, NULL, NULL)`,
  );
  const retireActive = db.prepare(
    "UPDATE signing_keys SET state = 'retired', retired_at = ?, publish_until = ? WHERE state = 'active'",
  );
  const rotate = db.transaction((key: SigningKeyRecord, retiredAt: number, publishUntil: number) => {
    retireActive.run(retiredAt, publishUntil);
    insertKey.run(key);
  });
  const insertUser = db.prepare(
    `INSERT INTO users (id, email, password_hash, role, tenant, disabled, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const userByEmail = db.prepare('SELECT * FROM users WHERE email = ? AND tenant = ?');
  const usersByEmail = db.prepare('SELECT * FROM users WHERE email = ? ORDER BY created_at, id LIMIT ?');
  const userById = db.prepare('SELECT * FROM users WHERE id = ?');
  const clientById = db.prepare('SELECT * FROM clients WHERE id = ?');
  const recentBySubject = db
    .prepare(
      'SELECT at FROM auth_attempts WHERE scope = ? AND subject = ? AND at > ? ORDER BY at DESC LIMIT ?',
    )
    .pluck();
  const recentByAddress = db
    .prepare(
      'SELECT at FROM auth_attempts WHERE scope = ? AND address = ? AND at > ? ORDER BY at DESC LIMIT ?',
    )
    .pluck();
  const insertAttempt = db.prepare(
    'INSERT INTO auth_attempts (scope, subject, address, at) VALUES (?, ?, ?, ?)',
  );
  // IMMEDIATE: the write lock is taken before the counts are read, so another process on the
  // same file (the CLI, a second instance) cannot count between the read and the insert.
  const claim = db.transaction((a: AttemptClaim): { id: number } | { blockedBy: number } => {
    const blockedBy = blockingAttempt(
      recentBySubject.all(a.scope, a.subject, a.since, a.limits.subject) as number[],
      recentByAddress.all(a.scope, a.address, a.since, a.limits.address) as number[],
      a.limits,
    );
    if (blockedBy !== undefined) return { blockedBy };
    return { id: Number(insertAttempt.run(a.scope, a.subject, a.address, a.now).lastInsertRowid) };
  });
  const dropAttempt = db.prepare('DELETE FROM auth_attempts WHERE id = ?');
  const setClientSecret = db.prepare('UPDATE clients SET secret_hash = ? WHERE id = ?');
  const insertSecret = db.prepare(
    'INSERT INTO server_secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const secretByName = db.prepare('SELECT value FROM server_secrets WHERE name = ?').pluck();
  const pruneAttempts = db.prepare('DELETE FROM auth_attempts WHERE at < ?');

  return {
    async listSigningKeys() {
      return (db.prepare('SELECT * FROM signing_keys ORDER BY created_at').all() as KeyRow[]).map(toKey);
    },
    async insertFirstSigningKey(key) {
      try {
        insertKey.run(key);
        return true;
      } catch (error) {
        if (isUniqueViolation(error)) return false;
        throw error;
      }
    },
    async rotateSigningKey(key, retiredAt, publishUntil) {
      rotate.immediate(key, retiredAt, publishUntil);
    },
    async deleteExpiredSigningKeys(now) {
      const rows = db
        .prepare("DELETE FROM signing_keys WHERE state = 'retired' AND publish_until < ? RETURNING kid")
        .all(now) as Array<{ kid: string }>;
      return rows.map((row) => row.kid);
    },
    async deleteSigningKey(kid) {
      return db.prepare('DELETE FROM signing_keys WHERE kid = ?').run(kid).changes > 0;
    },
    async ensureTenant(name, now) {
      db.prepare('INSERT INTO tenants (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING').run(
        name,
        now,
      );
    },
    async createUser(u) {
      try {
        insertUser.run(u.id, u.email, u.passwordHash, u.role, u.tenant, u.disabled ? 1 : 0, u.createdAt);
      } catch (error) {
        if (isUniqueViolation(error)) throw new DuplicateError('A user with this email in this tenant');
        throw error;
      }
    },
    async findUserByEmail(email, tenant) {
      const row = userByEmail.get(email, tenant) as UserRow | undefined;
      return row && toUser(row);
    },
    async findUsersByEmail(email, limit) {
      return (usersByEmail.all(email, limit) as UserRow[]).map(toUser);
    },
    async findUserById(id) {
      const row = userById.get(id) as UserRow | undefined;
      return row && toUser(row);
    },
    async listUsers(tenant) {
      const rows = tenant
        ? db.prepare('SELECT * FROM users WHERE tenant = ? ORDER BY created_at, id').all(tenant)
        : db.prepare('SELECT * FROM users ORDER BY created_at, id').all();
      return (rows as UserRow[]).map(toUser);
    },
    async hasUsers() {
      return db.prepare('SELECT 1 FROM users LIMIT 1').get() !== undefined;
    },
    async findUserByIdentity(issuer, subject) {
      const row = db
        .prepare(
          `SELECT users.* FROM user_identities JOIN users ON users.id = user_identities.user_id
           WHERE user_identities.issuer = ? AND user_identities.subject = ?`,
        )
        .get(issuer, subject) as UserRow | undefined;
      return row ? toUser(row) : undefined;
    },
    async linkIdentity(issuer, subject, userId, now) {
      const insert = db.prepare(
        'INSERT INTO user_identities (issuer, subject, user_id, linked_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      );
      return insert.run(issuer, subject, userId, now).changes > 0;
    },
    async unlinkIdentity(issuer, subject) {
      db.prepare('DELETE FROM user_identities WHERE issuer = ? AND subject = ?').run(issuer, subject);
    },
    async revokeSessions(id, at) {
      return db.prepare('UPDATE users SET sessions_valid_after = ? WHERE id = ?').run(at, id).changes > 0;
    },
    async setUserPassword(id, passwordHash, at) {
      db.prepare('UPDATE users SET password_hash = ?, sessions_valid_after = ? WHERE id = ?').run(
        passwordHash,
        at,
        id,
      );
    },
    async setClientDisabled(id, disabled) {
      return db.prepare('UPDATE clients SET disabled = ? WHERE id = ?').run(disabled ? 1 : 0, id).changes > 0;
    },
    async setUserDisabled(id, disabled) {
      return db.prepare('UPDATE users SET disabled = ? WHERE id = ?').run(disabled ? 1 : 0, id).changes > 0;
    },
    async createClient(c) {
      db.prepare(
        `INSERT INTO clients (id, name, secret_hash, scopes, tenant, disabled, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ).run(c.id, c.name, c.secretHash, c.scopes.join(' '), c.tenant, c.disabled ? 1 : 0, c.createdAt);
    },
    async findClient(id) {
      const row = clientById.get(id) as ClientRow | undefined;
      return row && toClient(row);
    },
    async listClients(tenant) {
      const rows = tenant
        ? db.prepare('SELECT * FROM clients WHERE tenant = ? ORDER BY created_at, id').all(tenant)
        : db.prepare('SELECT * FROM clients ORDER BY created_at, id').all();
      return (rows as ClientRow[]).map(toClient);
    },
    async setSigningKeyPrivate(kid, privateJwk) {
      db.prepare('UPDATE signing_keys SET private_jwk = ? WHERE kid = ?').run(privateJwk, kid);
    },
    async setServerSecret(name, value) {
      db.prepare('UPDATE server_secrets SET value = ? WHERE name = ?').run(value, name);
    },
    async setClientSecret(id, secretHash) {
      setClientSecret.run(secretHash, id);
    },
    async serverSecret(name, value, now) {
      insertSecret.run(name, value, now);
      return secretByName.get(name) as string;
    },
    async claimAttempt(attempt) {
      return claim.immediate(attempt);
    },
    async dropAttempt(id) {
      dropAttempt.run(id);
    },
    async pruneAttempts(before) {
      pruneAttempts.run(before);
    },
  };
}
