import type { ClientRecord, SigningKeyRecord, UserRecord } from './port/auth.ts';

/** Rows of the auth tables as both adapters return them, and their mapping to records. */
export interface KeyRow {
  kid: string;
  alg: string;
  public_jwk: string;
  private_jwk: string;
  created_at: number;
  retired_at: number | null;
  publish_until: number | null;
}
export interface UserRow {
  id: string;
  email: string;
  password_hash: string;
  role: string;
  tenant: string;
  disabled: number;
  created_at: number;
  sessions_valid_after: number | string | null;
}
export interface ClientRow {
  id: string;
  name: string;
  secret_hash: string;
  scopes: string;
  tenant: string;
  disabled: number;
  created_at: number;
}

export const toKey = (r: KeyRow): SigningKeyRecord => ({
  kid: r.kid,
  alg: r.alg,
  publicJwk: r.public_jwk,
  privateJwk: r.private_jwk,
  createdAt: r.created_at,
  retiredAt: r.retired_at,
  publishUntil: r.publish_until,
});
export const toUser = (r: UserRow): UserRecord => ({
  id: r.id,
  email: r.email,
  passwordHash: r.password_hash,
  role: r.role,
  tenant: r.tenant,
  disabled: r.disabled === 1,
  createdAt: r.created_at,
  sessionsValidAfter: r.sessions_valid_after === null ? null : Number(r.sessions_valid_after),
});
export const toClient = (r: ClientRow): ClientRecord => ({
  id: r.id,
  name: r.name,
  secretHash: r.secret_hash,
  scopes: r.scopes.split(' ').filter(Boolean),
  tenant: r.tenant,
  disabled: r.disabled === 1,
  createdAt: r.created_at,
});

/**
 * The throttle's verdict from the recent attempts (times, newest first, at most the limit) of a
 * subject and of an address: `undefined` when both are under their limits, else the time of the
 * attempt whose leaving the window frees a place (the later of the two when both are full).
 */
export function blockingAttempt(
  subject: readonly number[],
  address: readonly number[],
  limits: { subject: number; address: number },
): number | undefined {
  const full = (times: readonly number[], limit: number) =>
    times.length >= limit ? times[limit - 1] : undefined;
  const a = full(subject, limits.subject);
  const b = full(address, limits.address);
  if (a === undefined) return b;
  return b === undefined ? a : Math.max(a, b);
}
