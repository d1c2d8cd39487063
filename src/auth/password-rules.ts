/** What a new password must be, for every way one is set (the hashing is in passwords.ts). */
import { createRequire } from 'node:module';

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
  if ([...password].length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH)
    return `must NOT have more than ${MAX_PASSWORD_LENGTH} characters`;
  const plain = password.trim().toLowerCase();
  if (commonPasswords().has(plain)) return 'must NOT be a commonly used password (one found in breaches)';
  if (REPEATED.test(plain)) return 'must NOT repeat one character or a short group over and over';
  if (isRun(plain)) return 'must NOT be a run of consecutive characters (like 123456789012)';
  return undefined;
}
