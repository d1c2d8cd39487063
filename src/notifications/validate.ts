import type { ValueError } from '@sinclair/typebox/errors';
import { parseIsoTime } from '../clock.ts';
import type { FieldError } from '../errors.ts';
import { refusedUrl } from '../providers/outbound.ts';
import { CHANNELS, type Channel, type Content, type Priority, type Recipient } from './model.ts';
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
  expiresAt: number | null;
  scheduledAt: number | null;
}

/** Readable messages for pattern failures, by the field's last path segment. */
const FRIENDLY: Record<string, string> = {
  email: 'must be an email address such as ada@example.com',
  phone: 'must be an E.164 phone number such as +15550101234',
  endpoint: 'must be an https:// push service URL',
  deviceToken: 'must be a device token (letters, digits, and _:.=+/-)',
  platform: 'must be "apns" or "fcm"',
  priority: 'must be one of CRITICAL, HIGH, NORMAL, LOW',
  template: 'must be a template key (letters, digits, dot, dash, underscore)',
  expiresAt: 'must be an ISO 8601 time with a zone, such as 2026-01-01T09:00:00Z',
  scheduledAt: 'must be an ISO 8601 time with a zone, such as 2026-01-01T09:00:00Z',
};

const MAX_ERRORS = 20;

/** The two methods used of a compiled TypeBox schema (its Check narrows types, which we do not want here). */
interface Checker {
  Check(value: unknown): boolean;
  Errors(value: unknown): Iterable<ValueError>;
}

function schemaErrors(checker: Checker, value: unknown, prefix: string): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const error of checker.Errors(value)) {
    if (seen.has(error.path)) continue;
    seen.add(error.path);
    const last = error.path.slice(error.path.lastIndexOf('/') + 1);
    const isPattern = /match|union|Expected string length/i.test(error.message);
    const known = /Unexpected property/i.test(error.message)
      ? 'is not a known field'
      : isPattern && FRIENDLY[last]
        ? FRIENDLY[last]
        : error.message;
    errors.push({ path: `${prefix}${error.path}`, message: known });
    if (errors.length >= MAX_ERRORS) break;
  }
  return errors;
}

function pickChecker(body: Record<string, unknown>): Checker | undefined {
  switch (body.channel) {
    case 'email':
      return checkers.email;
    case 'sms':
      return checkers.sms;
    case 'push': {
      const recipient = body.recipient;
      const web = typeof recipient === 'object' && recipient !== null && 'subscription' in recipient;
      return web ? checkers.webPush : checkers.devicePush;
    }
    default:
      return undefined;
  }
}

/** null for a time not given, NaN for one that names no real moment (2026-02-30). */
function parseTime(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  return parseIsoTime(value) ?? Number.NaN;
}

/**
 * Validates one notification body at acceptance: shape and unknown fields (per channel),
 * recipient format, template XOR content, and times. Returns the field errors (paths under
 * `prefix`, e.g. `body`) or the normalized value. The Liquid syntax of inline content is
 * checked after, off the event loop (ingest.ts, templates/syntax-check.ts).
 */
export function validateNotification(
  raw: unknown,
  prefix: string,
  now: number,
  pushAllowedHosts: readonly string[] = [],
): ValidNotification | FieldError[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return [{ path: prefix, message: 'must be a JSON object' }];
  }
  const body = raw as Record<string, unknown>;
  const payload = payloadErrors(body, prefix);
  if (payload.length > 0) return payload;
  const checker = pickChecker(body);
  if (!checker) {
    return [{ path: `${prefix}/channel`, message: `must be one of ${CHANNELS.join(', ')}` }];
  }
  if (!checker.Check(body)) return schemaErrors(checker, body, prefix);
  const errors: FieldError[] = [];
  const hasTemplate = body.template !== undefined;
  const hasContent = body.content !== undefined;
  if (hasTemplate === hasContent) {
    errors.push({
      path: `${prefix}/${hasTemplate ? 'content' : 'template'}`,
      message: 'give either a template key or inline content, not both and not neither',
    });
  }
  const expiresAt = parseTime(body.expiresAt);
  const scheduledAt = parseTime(body.scheduledAt);
  if (Number.isNaN(expiresAt)) errors.push({ path: `${prefix}/expiresAt`, message: 'is not a valid time' });
  if (Number.isNaN(scheduledAt))
    errors.push({ path: `${prefix}/scheduledAt`, message: 'is not a valid time' });
  if (expiresAt !== null && expiresAt <= now) {
    errors.push({ path: `${prefix}/expiresAt`, message: 'must be in the future' });
  }
  if (expiresAt !== null && scheduledAt !== null && scheduledAt >= expiresAt) {
    errors.push({ path: `${prefix}/scheduledAt`, message: 'must be before expiresAt' });
  }
  const endpoint = (body.recipient as Recipient).subscription?.endpoint;
  const refused = endpoint === undefined ? undefined : refusedUrl(endpoint, pushAllowedHosts);
  if (refused) errors.push({ path: `${prefix}/recipient/subscription/endpoint`, message: refused });
  if (errors.length > 0) return errors;
  return {
    channel: body.channel as Channel,
    priority: (body.priority as Priority | undefined) ?? 'NORMAL',
    recipient: body.recipient as Recipient,
    template: (body.template as string | undefined) ?? null,
    content: (body.content as Content | undefined) ?? null,
    variables: (body.variables as Record<string, unknown> | undefined) ?? null,
    metadata: (body.metadata as Record<string, unknown> | undefined) ?? null,
    expiresAt,
    scheduledAt,
  };
}
