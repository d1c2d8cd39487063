/** A signing key as stored: the public JWK in clear, the private JWK possibly encrypted (see auth/key-crypto.ts). */
export interface SigningKeyRecord {
  kid: string;
  alg: string;
  /** Public JWK, JSON text. Published in the JWKS while the key is active or not yet expired. */
  publicJwk: string;
  /** Private JWK, JSON text or an `enc:v1:` envelope when HERALD_KEY_ENCRYPTION_SECRET is set. */
  privateJwk: string;
  createdAt: number;
  /** When rotation retired it (ms); null for the one active key. */
  retiredAt: number | null;
  /** Retired keys stay published until then (ms): the expiry of the last token they signed. */
  publishUntil: number | null;
}

/** A user as stored; `passwordHash` is argon2id (PHC string). */
export interface UserRecord {
  id: string;
  email: string;
  passwordHash: string;
  role: string;
  tenant: string;
  disabled: boolean;
  createdAt: number;
  /** Sessions (refresh-token chains) that began before this (epoch ms) are over; null: none ended. */
  sessionsValidAfter: number | null;
}

/** A service client as stored; `secretHash` is a keyed digest (or argon2id from before it). */
export interface ClientRecord {
  id: string;
  name: string;
  secretHash: string;
  scopes: string[];
  tenant: string;
  disabled: boolean;
  createdAt: number;
}

/** Storage the auth service needs: keys, tenants, users, clients and the login-failure log. */
export interface AuthStore {
  listSigningKeys(): Promise<SigningKeyRecord[]>;
  /** Inserts `key` as the active key unless one is active already (a concurrent instance won); true if inserted. */
  insertFirstSigningKey(key: SigningKeyRecord): Promise<boolean>;
  /** Atomically retires the active key (published until `publishUntil`) and makes `key` active. */
  rotateSigningKey(key: SigningKeyRecord, retiredAt: number, publishUntil: number): Promise<void>;
  /** Deletes retired keys whose last token has expired; returns their kids. */
  deleteExpiredSigningKeys(now: number): Promise<string[]>;
  /** Deletes one key at once (a compromised key); true if it existed. */
  deleteSigningKey(kid: string): Promise<boolean>;
  /** Replaces a key's stored private part (sealing a plaintext one at start-up). */
  setSigningKeyPrivate(kid: string, privateJwk: string): Promise<void>;

  /** Creates the tenant if it does not exist yet. */
  ensureTenant(name: string, now: number): Promise<void>;

  /** Inserts a user; throws `DuplicateError` when its tenant has a user with that email already. */
  createUser(user: UserRecord): Promise<void>;
  /** The user of `tenant` with that (lowercased) email. */
  findUserByEmail(email: string, tenant: string): Promise<UserRecord | undefined>;
  /**
   * The users of that (lowercased) email in every tenant, oldest first, at most `limit` (a login
   * that names no tenant checks each one's password).
   */
  findUsersByEmail(email: string, limit: number): Promise<UserRecord[]>;
  findUserById(id: string): Promise<UserRecord | undefined>;
  listUsers(tenant?: string): Promise<UserRecord[]>;
  /** Whether any user exists, in any tenant (the first start's hint), without reading them. */
  hasUsers(): Promise<boolean>;
  /** Sets the disabled flag; false when no such user. */
  setUserDisabled(id: string, disabled: boolean): Promise<boolean>;
  /** The user linked to an external identity (OpenID issuer and subject), if any. */
  findUserByIdentity(issuer: string, subject: string): Promise<UserRecord | undefined>;
  /**
   * Links an external identity to a user; false when the identity is linked already or the user
   * already has another identity at that issuer (nothing changes then).
   */
  linkIdentity(issuer: string, subject: string, userId: string, now: number): Promise<boolean>;
  /** Removes the link of an external identity, if any (a link the sign-in no longer honours). */
  unlinkIdentity(issuer: string, subject: string): Promise<void>;
  /** Ends every session of the user that began before `at` (epoch ms); false when no such user. */
  revokeSessions(id: string, at: number): Promise<boolean>;
  /** Replaces the password hash and ends every session that began before `at`. */
  setUserPassword(id: string, passwordHash: string, at: number): Promise<void>;

  createClient(client: ClientRecord): Promise<void>;
  /** Replaces a client's stored secret digest (an upgrade from argon2, a rotation). */
  setClientSecret(id: string, secretHash: string): Promise<void>;
  /** Sets a client's disabled flag; false when no such client. */
  setClientDisabled(id: string, disabled: boolean): Promise<boolean>;
  /** The stored value of a server secret, storing `value` first if there is none yet. */
  serverSecret(name: string, value: string, now: number): Promise<string>;
  /** Replaces a server secret's stored value (sealing a plaintext one at start-up). */
  setServerSecret(name: string, value: string): Promise<void>;
  findClient(id: string): Promise<ClientRecord | undefined>;
  listClients(tenant?: string): Promise<ClientRecord[]>;

  /**
   * Counts one attempt of `scope` for `subject` (an email, a client id) and `address`, atomically
   * with reading how many they already have after `since` (attempts in flight included), unless
   * either is at its limit. Returns the new attempt's id, or, when refused, the time of the
   * attempt that must leave the window before another may be counted.
   */
  claimAttempt(attempt: AttemptClaim): Promise<{ id: number } | { blockedBy: number }>;
  /** Removes a counted attempt (it succeeded: a success neither counts nor resets). */
  dropAttempt(id: number): Promise<void>;
  /** Forgets attempts older than `before`. */
  pruneAttempts(before: number): Promise<void>;
}

/** One attempt to count (AuthStore.claimAttempt). */
export interface AttemptClaim {
  /** What is counted: failed logins, failed client authentications, OpenID callbacks, preferences page posts. */
  scope: 'login' | 'token' | 'oidc' | 'preferences';
  subject: string;
  address: string;
  now: number;
  /** Attempts at or before this time no longer count. */
  since: number;
  limits: { subject: number; address: number };
}

/** A unique constraint refused an insert (e.g. an email already in use). */
export class DuplicateError extends Error {
  constructor(what: string) {
    super(`${what} already exists`);
    this.name = 'DuplicateError';
  }
}
