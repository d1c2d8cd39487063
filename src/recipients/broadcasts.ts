/**
 * A broadcast's body (docs/topics.md): checked as a notification is at acceptance
 * (notifications/validate.ts), with a topic in place of a recipient, and made into the row the
 * fan-out copies for every subscriber (store/port/broadcasts.ts).
 */
import type { FieldError } from '../errors.ts';
import { HeraldError } from '../errors.ts';
import { fieldMessage, MAX_FIELD_ERRORS } from '../http/field-messages.ts';
import { notificationId } from '../notifications/ids.ts';
import { priorityRank, type Recipient } from '../notifications/model.ts';
import { type ValidNotification, validateNotification } from '../notifications/validate.ts';
import type { NewBroadcast } from '../store/port/broadcasts.ts';
import type { TemplateRecord } from '../store/port/templates.ts';
import { categoryOf } from '../templates/default-category.ts';
import { liquidSources } from '../templates/fields.ts';
import type { SyntaxCheck } from '../templates/syntax-check.ts';
import { TOPIC_KEY } from './topics.ts';

/**
 * A recipient standing in for the subscribers (each is one, `{ id }`), while the rest of the
 * body, `category` and `locale` included, is checked by the notification's own rules.
 */
const STAND_IN: Recipient = { id: 'subscriber' };

/** The fields a broadcast has that a notification does not, checked here. */
function ownErrors(body: Record<string, unknown>, errors: FieldError[]): void {
  const { topic } = body;
  if (topic === undefined) {
    errors.push({
      path: 'body/topic',
      message: fieldMessage({ keyword: 'required', params: { missingProperty: 'topic' } }),
    });
  } else if (typeof topic !== 'string' || !TOPIC_KEY.test(topic)) {
    errors.push({ path: 'body/topic', message: 'must be a topic key of your tenant' });
  }
  if (body.recipient !== undefined) {
    errors.push({
      path: 'body/recipient',
      message: "must NOT be given: a broadcast goes to the topic's subscribers",
    });
  }
}

/** A checked broadcast body: the notification every subscriber gets, and its topic. */
export interface ValidBroadcast {
  topic: string;
  notification: ValidNotification;
}

/** Every problem of a broadcast body, or its checked value (400 VALIDATION_FAILED otherwise). */
export async function validateBroadcast(
  raw: unknown,
  tenant: string,
  now: number,
  pushAllowedHosts: readonly string[],
  syntax: SyntaxCheck,
): Promise<ValidBroadcast> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw invalid([{ path: 'body', message: fieldMessage({ keyword: 'type', params: { type: 'object' } }) }]);
  }
  const { topic, recipient: _given, ...rest } = raw as Record<string, unknown>;
  const errors: FieldError[] = [];
  ownErrors(raw as Record<string, unknown>, errors);
  const checked = validateNotification({ ...rest, recipient: STAND_IN }, 'body', now, pushAllowedHosts);
  if (Array.isArray(checked)) errors.push(...checked);
  if (errors.length > 0 || Array.isArray(checked)) throw invalid(errors.slice(0, MAX_FIELD_ERRORS));
  if (checked.content !== null) {
    const [problems = []] = await syntax(tenant, [
      {
        sources: liquidSources(checked.content),
        prefix: 'body/content',
        rank: priorityRank(checked.priority),
      },
    ]);
    if (problems.length > 0) throw invalid(problems);
  }
  return { topic: topic as string, notification: checked };
}

const invalid = (errors: FieldError[]) =>
  new HeraldError('VALIDATION_FAILED', 'The broadcast is invalid.', { errors });

const json = (value: unknown): string | null => (value === null ? null : JSON.stringify(value));

/** The row to store: the notification's JSON columns serialized as ingest serializes them. */
export function newBroadcast(
  tenant: string,
  v: ValidBroadcast,
  template: TemplateRecord | null,
  now: number,
  /** The request's sampled `traceparent` (tracing/tracer.ts `traceparentOf`), or null. */
  traceContext: string | null,
): NewBroadcast {
  const n = v.notification;
  return {
    id: notificationId(now),
    tenant,
    topic: v.topic,
    channel: n.channel,
    priority: n.priority,
    templateKey: template ? template.key : null,
    templateVersion: template ? template.version : null,
    content: json(n.content),
    variables: json(n.variables),
    metadata: json(n.metadata),
    category: categoryOf(n.category, template),
    locale: n.locale,
    scheduledAt: n.scheduledAt,
    expiresAt: n.expiresAt,
    createdAt: now,
    traceContext,
  };
}
