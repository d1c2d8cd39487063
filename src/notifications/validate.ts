import type { ValueError } from '@sinclair/typebox/compiler';
import { parseIsoTime } from '../clock.ts';
import type { FieldError } from '../errors.ts';
import { fieldMessage, MAX_FIELD_ERRORS, NOT_A_TIME, ruleOfTypeBox } from '../http/field-messages.ts';
import { inboxUrlProblem } from '../inbox/content.ts';
import { refusedUrl } from '../providers/outbound.ts';
import { hasLiquid } from '../templates/fields.ts';
import { canonicalLocale, LOCALE_MESSAGE } from '../templates/locale.ts';
import type { Channel, Content, Priority, Recipient } from './model.ts';
import { payloadErrors } from './payload.ts';
import { checkers } from './schemas.ts';

/** A notification body that passed every acceptance check except the template lookup. */
export interface ValidNotification {
  channel: Channel;
  priority: Priority;
  recipient: Recipient;
  template: string | null;
  content: Content | null;
  variables: Record<string, unknown> | null;
  metadata: Record<string, unknown> | null;
  /** Canonical BCP 47, or null when none was given. */
  locale: string | null;
  category: string | null;
  expiresAt: number | null;
  scheduledAt: number | null;
}

/** The two methods used of a compiled TypeBox schema (its Check narrows types, which we do not want here). */
export interface Checker {
  Check(value: unknown): boolean;
  Errors(value: unknown): Iterable<ValueError>;
}

/**
 * Every rule of the schema the body breaks, worded as ajv words them (field-messages.ts). A
 * required property TypeBox finds missing is also "not a string": only the first is said.
 */
export function schemaErrors(checker: Checker, value: unknown, prefix: string, errors: FieldError[]): void {
  // The path of the last missing property; none at first (the value itself is at path '').
  let missing: string | undefined;
  for (const error of checker.Errors(value)) {
    if (errors.length >= MAX_FIELD_ERRORS) return;
    if (error.path === missing) continue;
    const rule = ruleOfTypeBox(error);
    if (rule.keyword === 'required') missing = error.path;
    errors.push({ path: `${prefix}${error.path}`, message: fieldMessage(rule) });
  }
}

function pickChecker(body: Record<string, unknown>): Checker {
  const recipient = body.recipient;
  const has = (field: string) => typeof recipient === 'object' && recipient !== null && field in recipient;
  // `{ id }` names a person on any channel (docs/sending-to-people.md).
  const person = has('id');
  switch (body.channel) {
    case 'email':
      return person ? checkers.emailPerson : checkers.email;
    case 'sms':
      return person ? checkers.smsPerson : checkers.sms;
    case 'push':
      if (person) return checkers.pushPerson;
      return has('subscription') ? checkers.webPush : checkers.devicePush;
    case 'inapp':
      return checkers.inapp;
    default:
      return checkers.anyChannel;
  }
}

/** null for a time not given, NaN for one that names no real moment (2026-02-30). */
function parseTime(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  return parseIsoTime(value) ?? Number.NaN;
}

/**
 * What the schema cannot say: template XOR content, times that exist and come in order, a push
 * endpoint Herald may call. Each is checked whatever the rest of the body is, but not on a field
 * the schema already refused.
 */
function meaningErrors(
  body: Record<string, unknown>,
  prefix: string,
  now: number,
  pushAllowedHosts: readonly string[],
  errors: FieldError[],
  times: { expiresAt: number | null; scheduledAt: number | null },
): void {
  const refused = new Set(errors.map((e) => e.path));
  const fine = (field: string) => !refused.has(`${prefix}/${field}`);
  const hasTemplate = body.template !== undefined;
  const hasContent = body.content !== undefined;
  if (hasTemplate && hasContent) {
    errors.push({
      path: `${prefix}/content`,
      message: 'must NOT be given with a template: give one of the two',
    });
  } else if (!hasTemplate && !hasContent) {
    errors.push({ path: `${prefix}/template`, message: 'must be given, or inline content instead' });
  }
  const expiresAt = fine('expiresAt') ? times.expiresAt : null;
  const scheduledAt = fine('scheduledAt') ? times.scheduledAt : null;
  if (Number.isNaN(expiresAt)) errors.push({ path: `${prefix}/expiresAt`, message: NOT_A_TIME });
  if (Number.isNaN(scheduledAt)) errors.push({ path: `${prefix}/scheduledAt`, message: NOT_A_TIME });
  if (expiresAt !== null && expiresAt <= now) {
    errors.push({ path: `${prefix}/expiresAt`, message: 'must be in the future' });
  }
  if (expiresAt !== null && scheduledAt !== null && scheduledAt >= expiresAt) {
    errors.push({ path: `${prefix}/scheduledAt`, message: 'must be before expiresAt' });
  }
  const endpointPath = 'recipient/subscription/endpoint';
  const endpoint = (body.recipient as Recipient | null | undefined)?.subscription?.endpoint;
  const refusal =
    typeof endpoint === 'string' && fine(endpointPath) ? refusedUrl(endpoint, pushAllowedHosts) : undefined;
  if (refusal) errors.push({ path: `${prefix}/${endpointPath}`, message: refusal });
  // An inbox link without Liquid is checked now; one made by Liquid, once rendered (inbox/content.ts).
  const url = (body.content as { url?: unknown } | null | undefined)?.url;
  if (body.channel === 'inapp' && typeof url === 'string' && fine('content/url') && !hasLiquid(url)) {
    const problem = inboxUrlProblem(url);
    if (problem) errors.push({ path: `${prefix}/content/url`, message: problem });
  }
  if (typeof body.locale === 'string' && fine('locale') && canonicalLocale(body.locale) === undefined) {
    errors.push({ path: `${prefix}/locale`, message: LOCALE_MESSAGE });
  }
}

/**
 * Validates one notification body at acceptance: shape and unknown fields (per channel),
 * recipient format, template XOR content, and times. Returns every problem found (paths under
 * `prefix`, e.g. `body`; MAX_FIELD_ERRORS at most) or the normalized value. The Liquid syntax
 * of inline content is checked after, off the event loop (ingest.ts, templates/syntax-check.ts).
 */
export function validateNotification(
  raw: unknown,
  prefix: string,
  now: number,
  pushAllowedHosts: readonly string[] = [],
): ValidNotification | FieldError[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return [{ path: prefix, message: fieldMessage({ keyword: 'type', params: { type: 'object' } }) }];
  }
  const body = raw as Record<string, unknown>;
  const errors = payloadErrors(body, prefix);
  const checker = pickChecker(body);
  // Check first: a valid body (nearly every one) pays no error walk.
  if (!checker.Check(body)) schemaErrors(checker, body, prefix, errors);
  const expiresAt = parseTime(body.expiresAt);
  const scheduledAt = parseTime(body.scheduledAt);
  meaningErrors(body, prefix, now, pushAllowedHosts, errors, { expiresAt, scheduledAt });
  if (errors.length > 0) return errors.slice(0, MAX_FIELD_ERRORS);
  return {
    channel: body.channel as Channel,
    priority: (body.priority as Priority | undefined) ?? 'NORMAL',
    recipient: body.recipient as Recipient,
    template: (body.template as string | undefined) ?? null,
    content: (body.content as Content | undefined) ?? null,
    variables: (body.variables as Record<string, unknown> | undefined) ?? null,
    metadata: (body.metadata as Record<string, unknown> | undefined) ?? null,
    locale: typeof body.locale === 'string' ? (canonicalLocale(body.locale) as string) : null,
    category: (body.category as string | undefined) ?? null,
    expiresAt,
    scheduledAt,
  };
}
