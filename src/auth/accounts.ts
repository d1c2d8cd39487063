import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { ConfigError } from '../config/read.ts';
import { type AuthStore, type ClientRecord, DuplicateError, type UserRecord } from '../store/port/auth.ts';
import { type GateTurn, localTurn } from './argon2-gate.ts';
import type { ClientSecrets } from './client-secrets.ts';
import { passwordProblem } from './password-rules.ts';
import { hashSecret } from './passwords.ts';
import { DEFAULT_TENANT, ROLE_SCOPES, type UserRole } from './principal.ts';

/** What a user's email may be (the HTTP schema and the CLI both check it). */
export const USER_EMAIL = /^[^\s@]+@[^\s@]+$/;

/** Emails are compared case-insensitively: stored and looked up lowercased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function isRole(role: string): role is UserRole {
  return Object.hasOwn(ROLE_SCOPES, role);
}

/** The scopes a role grants. */
export function scopesOfRole(role: string): readonly string[] {
  return isRole(role) ? ROLE_SCOPES[role] : [];
}

/**
 * Creates a user (hashing the password) in `tenant`, creating the tenant if new. Throws
 * DuplicateError when the tenant has a user with that email; the same email in another tenant is
 * another user. The duplicate is looked for before the password is hashed, so re-posting an
 * existing user costs no argon2 work (the insert's unique constraint still settles a race).
 */
export async function createUser(
  store: AuthStore,
  clock: Clock,
  input: { email: string; password: string; role: UserRole; tenant: string; turn?: GateTurn },
): Promise<UserRecord> {
  const email = normalizeEmail(input.email);
  if (await store.findUserByEmail(email, input.tenant)) {
    throw new DuplicateError('A user with this email in this tenant');
  }
  const now = clock.now();
  await store.ensureTenant(input.tenant, now);
  const user: UserRecord = {
    id: `usr_${randomUUID()}`,
    email,
    passwordHash: await hashSecret(input.password, input.turn ?? localTurn(input.tenant)),
    role: input.role,
    tenant: input.tenant,
    disabled: false,
    createdAt: now,
    sessionsValidAfter: null,
  };
  await store.createUser(user);
  return user;
}

/** Creates a service client; returns the record and the secret, which is never stored or shown again. */
export async function createClient(
  store: AuthStore,
  clock: Clock,
  secrets: ClientSecrets,
  input: { name: string; scopes: string[]; tenant: string },
): Promise<{ client: ClientRecord; secret: string }> {
  const now = clock.now();
  await store.ensureTenant(input.tenant, now);
  const secret = newClientSecret();
  const client: ClientRecord = {
    id: `cli_${randomBytes(12).toString('hex')}`,
    name: input.name,
    secretHash: await secrets.digest(secret),
    scopes: [...new Set(input.scopes)],
    tenant: input.tenant,
    disabled: false,
    createdAt: now,
  };
  await store.createClient(client);
  return { client, secret };
}

/** Disables a user and ends its sessions: it can neither log in nor refresh. */
export async function disableUser(store: AuthStore, clock: Clock, id: string): Promise<void> {
  await store.setUserDisabled(id, true);
  await store.revokeSessions(id, clock.now());
}

/** Gives a client a new secret; returns it (shown once). The old one is refused from then on. */
export async function rotateClientSecret(
  store: AuthStore,
  secrets: ClientSecrets,
  id: string,
): Promise<string> {
  const secret = newClientSecret();
  await store.setClientSecret(id, await secrets.digest(secret));
  return secret;
}

/** 256 bits of randomness: guessing is hopeless, so a keyed digest is enough (client-secrets.ts). */
function newClientSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Start-up bootstrap (HERALD_ADMIN_EMAIL / HERALD_ADMIN_PASSWORD): creates that admin in tenant
 * `default` when that tenant has no user with that email (a user of that email in another tenant
 * is another user). Returns whether it created one.
 */
export async function bootstrapAdmin(
  store: AuthStore,
  clock: Clock,
  email: string | undefined,
  password: string | undefined,
): Promise<boolean> {
  if (!email || !password) return false;
  if (await store.findUserByEmail(normalizeEmail(email), DEFAULT_TENANT)) return false;
  // Checked only when the admin is to be made: an admin made before a rule was added keeps
  // starting (the variable serves only this first creation).
  const problem = passwordProblem(password);
  if (problem) throw new ConfigError('HERALD_ADMIN_PASSWORD', problem);
  try {
    await createUser(store, clock, { email, password, role: 'admin', tenant: DEFAULT_TENANT });
    return true;
  } catch (error) {
    // Another instance bootstrapped the same admin at the same moment.
    if (error instanceof DuplicateError) return false;
    throw error;
  }
}
