import { hash, verify } from '@node-rs/argon2';
import { HeraldError } from '../errors.ts';
import { FairGate, type GateStats, type GateTurn } from './argon2-gate.ts';
import { MAX_PASSWORD_LENGTH, passwordProblem } from './password-rules.ts';

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

/**
 * This process's argon2 gate as metrics and tests see it: hashes and verifications started (the
 * herald_argon2_operations_total metric) and jobs waiting (all tenants', or `tenant`'s).
 */
export function argon2Stats(tenant?: string): GateStats {
  return gate.stats(tenant);
}

/**
 * Hashes a password with argon2id, as `turn`'s work; the PHC string carries salt and parameters.
 */
export function hashSecret(secret: string, turn: GateTurn): Promise<string> {
  if (secret.length > MAX_PASSWORD_LENGTH) throw new TypeError('secret longer than the cap');
  return gate.run(turn, () => hash(secret, PARAMS));
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
  return gate.run(turn, async () => {
    try {
      const ok = await verify(target, secret);
      return ok && stored !== undefined;
    } catch {
      return false;
    }
  });
}
