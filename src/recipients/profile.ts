import { type FieldError, HeraldError } from '../errors.ts';
import { fieldMessage, MAX_FIELD_ERRORS, NUL_MESSAGE, tooDeep } from '../http/field-messages.ts';
import { nulPath } from '../http/nul.ts';
import { canonicalLocale, canonicalTimeZone } from '../locale.ts';
import { MAX_DEPTH } from '../notifications/payload.ts';
import { schemaErrors } from '../notifications/validate.ts';
import { refusedUrl } from '../providers/outbound.ts';
import { MAX_PUSH_TARGETS, type PushTarget, type RecipientProfile } from './model.ts';
import { DATA_MAX_BYTES, idChecker, profileChecker, pushCheckers } from './schemas.ts';

/**
 * The one check of a recipient's profile (docs/recipients.md), wherever one arrives: PUT, the result of
 * a PATCH, an item of POST /recipients/batch, a row of `herald recipients import`. Every address
 * is checked as section 3 checks a notification's recipient, with its schemas and the outbound
 * rules of section 7 (a push endpoint Herald may call).
 */

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether `value` nests deeper than `limit` levels (an object or list is level 1). Iterative. */
export function nestsDeeper(value: unknown, limit: number): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const current = values.pop();
    const depth = depths.pop() as number;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(current)) {
      if (typeof child === 'object' && child !== null) {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** What a value that must be a JSON object and is not gets told. */
export const NOT_AN_OBJECT = fieldMessage({ keyword: 'type', params: { type: 'object' } });

/** The 400 of a refused profile (or batch item), listing its problems. */
export const invalidRecipient = (errors: FieldError[]) =>
  new HeraldError('VALIDATION_FAILED', 'The recipient is invalid.', { errors });

/** Whether a string or key anywhere in `value` holds U+0000 (nul.ts says where). Iterative. */
function holdsNul(value: unknown): boolean {
  const values: unknown[] = [value];
  while (values.length > 0) {
    const current = values.pop();
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return true;
    } else if (typeof current === 'object' && current !== null) {
      for (const key in current) {
        if (key.includes('\u0000')) return true;
        values.push((current as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

const LOCALE_MESSAGE = 'must be a BCP 47 language tag such as fr-CA';
const TIME_ZONE_MESSAGE = 'must be an IANA time zone name such as Europe/Paris';
const DATA_SIZE_MESSAGE = `must NOT be more than ${DATA_MAX_BYTES} bytes as JSON`;

/** A push target's errors: section 3's schema of its form, then the endpoint's outbound rule. */
function pushErrors(target: unknown, path: string, allowedHosts: readonly string[], errors: FieldError[]) {
  const web = isPlainObject(target) && 'subscription' in target;
  const checker = web ? pushCheckers.webPush : pushCheckers.device;
  if (!checker.Check(target)) {
    schemaErrors(checker, target, path, errors);
    return;
  }
  if (!web) return;
  const endpoint = (target as { subscription: { endpoint: string } }).subscription.endpoint;
  const refusal = refusedUrl(endpoint, allowedHosts);
  if (refusal) errors.push({ path: `${path}/subscription/endpoint`, message: refusal });
}

/**
 * A profile's problems (paths under `prefix`; MAX_FIELD_ERRORS at most), or the profile to store:
 * the fields given, a null field left out (null stands for absent, as GET shows an unset field),
 * locale and time zone in their canonical spelling.
 */
export function checkProfile(
  raw: unknown,
  prefix: string,
  pushAllowedHosts: readonly string[],
): RecipientProfile | FieldError[] {
  if (!isPlainObject(raw)) {
    return [{ path: prefix, message: NOT_AN_OBJECT }];
  }
  const errors: FieldError[] = [];
  // The path is worked out only for a value that holds one (building paths costs per key).
  if (holdsNul(raw)) errors.push({ path: nulPath(raw, prefix) ?? prefix, message: NUL_MESSAGE });
  // Copied only when a field is null. Defined, not assigned: an own `__proto__` key (JSON.parse
  // makes one) stays a field, refused.
  const given = Object.values(raw).includes(null)
    ? Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== null))
    : raw;
  if (!profileChecker.Check(given)) schemaErrors(profileChecker, given, prefix, errors);
  const refused = errors.length === 0 ? undefined : new Set(errors.map((e) => e.path));
  const fine = (field: string) => given[field] !== undefined && !refused?.has(`${prefix}/${field}`);
  const push = given.push;
  if (fine('push') && Array.isArray(push) && push.length <= MAX_PUSH_TARGETS) {
    push.forEach((target, i) => {
      pushErrors(target, `${prefix}/push/${i}`, pushAllowedHosts, errors);
    });
  }
  const locale = fine('locale') ? canonicalLocale(given.locale as string) : undefined;
  if (fine('locale') && locale === undefined)
    errors.push({ path: `${prefix}/locale`, message: LOCALE_MESSAGE });
  const timezone = fine('timezone') ? canonicalTimeZone(given.timezone as string) : undefined;
  if (fine('timezone') && timezone === undefined) {
    errors.push({ path: `${prefix}/timezone`, message: TIME_ZONE_MESSAGE });
  }
  if (fine('data')) {
    // Depth first: a value nested deep enough would overflow JSON.stringify's stack.
    if (nestsDeeper(given.data, MAX_DEPTH))
      errors.push({ path: `${prefix}/data`, message: tooDeep(MAX_DEPTH) });
    else if (Buffer.byteLength(JSON.stringify(given.data)) > DATA_MAX_BYTES) {
      errors.push({ path: `${prefix}/data`, message: DATA_SIZE_MESSAGE });
    }
  }
  if (errors.length > 0) return errors.slice(0, MAX_FIELD_ERRORS);
  const profile: RecipientProfile = {};
  if (given.email !== undefined) profile.email = given.email as string;
  if (given.phone !== undefined) profile.phone = given.phone as string;
  if (given.push !== undefined) profile.push = given.push as PushTarget[];
  if (locale !== undefined) profile.locale = locale;
  if (timezone !== undefined) profile.timezone = timezone;
  if (given.name !== undefined) profile.name = given.name as string;
  if (given.data !== undefined) profile.data = given.data as Record<string, unknown>;
  return profile;
}

/** A recipient with its ID, as a batch item or an import row gives it. */
export interface RecipientEntry {
  id: string;
  profile: RecipientProfile;
}

/**
 * `{ recipientId, ...profile }` (an item of POST /recipients/batch, a row of an import): the ID's
 * problems and the profile's together, or the entry to store.
 */
export function checkEntry(
  raw: unknown,
  prefix: string,
  pushAllowedHosts: readonly string[],
): RecipientEntry | FieldError[] {
  if (!isPlainObject(raw)) {
    return [{ path: prefix, message: NOT_AN_OBJECT }];
  }
  const { recipientId, ...rest } = raw;
  const errors: FieldError[] = [];
  // Left out when absent, so that the answer says it is required.
  const id = recipientId === undefined ? {} : { recipientId };
  if (!idChecker.Check(id)) schemaErrors(idChecker, id, prefix, errors);
  const profile = checkProfile(rest, prefix, pushAllowedHosts);
  if (Array.isArray(profile)) errors.push(...profile);
  if (errors.length > 0 || Array.isArray(profile)) return errors.slice(0, MAX_FIELD_ERRORS);
  return { id: recipientId as string, profile };
}
