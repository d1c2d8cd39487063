import { createRequire } from 'node:module';
import { hash, verify } from '@node-rs/argon2';
import { HeraldError } from '../errors.ts';
import { FairGate, type GateTurn } from './argon2-gate.ts';

/** Longest password accepted, in characters: argon2 would hash megabytes, so the length is capped first. */
export const MAX_PASSWORD_LENGTH = 1024;
/** Shortest password accepted when a user is created. */
export const MIN_PASSWORD_LENGTH = 12;

let common: ReadonlySet<string> | undefined;

/**
 * The common and breached passwords that @zxcvbn-ts/language-common ships (about 49,000, in
 * lowercase, most used first; nothing is fetched). Read on first use (about 0.1 s and 7 MB),
 * not at start: most processes never set a password.
 */
function commonPasswords(): ReadonlySet<string> {
  common ??= new Set(
    (createRequire(import.meta.url)('@zxcvbn-ts/language-common') as CommonLanguage).dictionary[
      'passwords-common'
    ],
  );
  return common;
}
type CommonLanguage = { dictionary: { 'passwords-common': string[] } };

/** One character, or a group of up to four, over and over (`aaaaaaaaaaaa`, `abcabcabcabc`). */
const REPEATED = /^(.{1,4})\1+$/su;

/** Whether each character follows the one before by the same step, +1 or -1 (digits wrap 9-0). */
function isRun(text: string): boolean {
  const codes = [...text].map((c) => c.codePointAt(0) as number);
  const isDigit = (code: number) => code >= 48 && code <= 57;
  return [1, -1].some((step) =>
    codes.every((code, i) => {
      if (i === 0) return true;
      const before = codes[i - 1] as number;
      if (code - before === step) return true;
      return isDigit(code) && isDigit(before) && (before - 48 + step + 10) % 10 === code - 48;
    }),
  );
}

/**
 * Why a new password is refused, as the end of a sentence ("must ..."), or undefined when it is
 * accepted. The one rule for every way a password is set: POST /admin/users, POST /auth/password,
 * `herald users add` and HERALD_ADMIN_PASSWORD. Beyond the length, it refuses what an attacker
 * tries first (ASVS 2.1.7, NIST SP 800-63B 5.1.1.2): a password of the common and breached list
 * (case aside), and the patterns such a list holds only a few of: one character or a short group
 * repeated, and a run like 123456789012 or abcdefghijkl. No composition rules (ASVS 2.1.9).
 */
export function passwordProblem(password: string): string | undefined {
  if ([...password].length < MIN_PASSWORD_LENGTH)
    return `must have at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `must have at most ${MAX_PASSWORD_LENGTH} characters`;
  const plain = password.trim().toLowerCase();
  if (commonPasswords().has(plain)) return 'must not be a commonly used password (one found in breaches)';
  if (REPEATED.test(plain)) return 'must not repeat one character or a short group over and over';
  if (isRun(plain)) return 'must not be a run of consecutive characters (like 123456789012)';
  return undefined;
}

/**
 * Refuses a new password that passwordProblem refuses: `400 VALIDATION_FAILED` naming the rule,
 * at `path` (`body/password`), before anything is hashed or stored.
 */
export function refuseWeakPassword(password: string, path: string): void {
  const problem = passwordProblem(password);
  if (problem) {
    throw new HeraldError('VALIDATION_FAILED', `The password ${problem}.`, {
      errors: [{ path, message: problem }],
    });
  }
}

// OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane (about 10 ms here).
// `algorithm: 2` is Argon2id (a const enum, which verbatimModuleSyntax cannot import).
const PARAMS = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * argon2 runs at most 4 at once (libuv's thread pool has 4 threads, shared with file I/O). The
 * rest wait in turns, tenant by tenant and caller by caller (argon2-gate.ts), at most 64 of one
 * tenant, 16 of one caller and 1,024 in all; past that a caller gets 503 with Retry-After at once
 * instead of queueing without bound, so a flood cannot hold the thread pool or grow memory, and
 * one tenant's flood (or one caller's) is refused to it alone while the others still take turns.
 */
const gate = new FairGate({ running: 4, waiting: 1024, waitingPerTenant: 64, waitingPerCaller: 16 });

let operations = 0;

/** argon2 hashes and verifications run by this process (the herald_argon2_operations_total metric). */
export function argon2Operations(): number {
  return operations;
}

/** argon2 jobs waiting for a slot: all tenants', or one tenant's. */
export function argon2Waiting(tenant?: string): number {
  return gate.waiting(tenant);
}

function gated<T>(turn: GateTurn, work: () => Promise<T>): Promise<T> {
  return gate.run(turn, () => {
    operations++;
    return work();
  });
}

/**
 * Hashes a password with argon2id, as `turn`'s work; the PHC string carries salt and parameters.
 */
export function hashSecret(secret: string, turn: GateTurn): Promise<string> {
  if (secret.length > MAX_PASSWORD_LENGTH) throw new TypeError('secret longer than the cap');
  return gated(turn, () => hash(secret, PARAMS));
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
 * Checks a secret against a stored hash (or the dummy hash when there is none), as `turn`'s work.
 * Throws only the 503 of a full argon2 queue (the secret was not checked); anything else is a
 * mismatch.
 */
export async function verifySecret(
  stored: string | undefined,
  secret: string,
  turn: GateTurn,
): Promise<boolean> {
  const target = stored ?? (await dummyHash());
  // Over-long input is refused without hashing; the cap is public, so this reveals nothing.
  if (secret.length > MAX_PASSWORD_LENGTH) return false;
  return gated(turn, async () => {
    try {
      const ok = await verify(target, secret);
      return ok && stored !== undefined;
    } catch {
      return false;
    }
  });
}
