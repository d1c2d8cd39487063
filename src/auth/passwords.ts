import { hash, verify } from '@node-rs/argon2';
import { HeraldError } from '../errors.ts';

/** Longest password accepted, in characters: argon2 would hash megabytes, so the length is capped first. */
export const MAX_PASSWORD_LENGTH = 1024;
/** Shortest password accepted when a user is created. */
export const MIN_PASSWORD_LENGTH = 12;

// OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane (about 10 ms here).
// `algorithm: 2` is Argon2id (a const enum, which verbatimModuleSyntax cannot import).
const PARAMS = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * argon2 runs at most RUNNING at once (libuv's thread pool has 4 threads, shared with file I/O)
 * with at most WAITING more queued; past that a caller gets 503 with Retry-After at once instead
 * of queueing without bound, so a flood of logins cannot hold the thread pool or grow memory.
 */
const RUNNING = 4;
const WAITING = 64;
let running = 0;
const waiting: Array<() => void> = [];

let operations = 0;

/** argon2 hashes and verifications run by this process (the herald_argon2_operations_total metric). */
export function argon2Operations(): number {
  return operations;
}

async function gated<T>(work: () => Promise<T>): Promise<T> {
  if (running >= RUNNING) {
    if (waiting.length >= WAITING) {
      throw new HeraldError('UNAVAILABLE', 'Too many sign-ins at once; try again shortly.', {
        retryAfterS: 1,
      });
    }
    // The releasing caller hands its place over: `running` does not change.
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else running++;
  operations++;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

/** Hashes a password or client secret with argon2id; the PHC string carries salt and parameters. */
export function hashSecret(secret: string): Promise<string> {
  if (secret.length > MAX_PASSWORD_LENGTH) throw new TypeError('secret longer than the cap');
  return gated(() => hash(secret, PARAMS));
}

let dummy: Promise<string> | undefined;

/**
 * A hash of nothing anyone knows, made once per process with the same parameters, so an
 * unknown email or client id costs the same argon2 verification as a known one.
 */
export function dummyHash(): Promise<string> {
  dummy ??= hash(`dummy-${Math.random()}-${process.hrtime.bigint()}`, PARAMS);
  return dummy;
}

/**
 * Checks a secret against a stored hash (or the dummy hash when there is none). Throws only the
 * 503 of a full argon2 queue (the secret was not checked); anything else is a mismatch.
 */
export async function verifySecret(stored: string | undefined, secret: string): Promise<boolean> {
  const target = stored ?? (await dummyHash());
  // Over-long input is refused without hashing; the cap is public, so this reveals nothing.
  if (secret.length > MAX_PASSWORD_LENGTH) return false;
  return gated(async () => {
    try {
      const ok = await verify(target, secret);
      return ok && stored !== undefined;
    } catch {
      return false;
    }
  });
}
