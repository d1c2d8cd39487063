import type { DeliveryReport } from '../notifications/delivery-report.ts';
import {
  type Channel,
  type EventRecord,
  type EventType,
  type NotificationRecord,
  priorityOf,
  type Status,
} from '../notifications/model.ts';
import type { SuppressionReason } from '../suppressions/model.ts';
import type { SandboxMessage } from './port/sandbox.ts';
import type { TemplateContent, TemplateRecord, TemplateVariant } from './port/templates.ts';

/**
 * A `notifications` row as both adapters return it: better-sqlite3 as is, postgres.js with
 * BIGINT parsed to number (see postgres/connect.ts). One mapper serves both.
 */
export interface NotificationRow {
  seq: number;
  id: string;
  tenant: string;
  channel: string;
  priority: number;
  status: string;
  recipient: string;
  template_key: string | null;
  template_version: number | null;
  locale: string | null;
  content: string | null;
  variables: string | null;
  metadata: string | null;
  category: string | null;
  request_hash: string | null;
  scheduled_at: number | null;
  expires_at: number | null;
  attempts: number;
  holds: number;
  next_attempt_at: number | null;
  provider: string | null;
  provider_message_id: string | null;
  created_at: number;
  updated_at: number;
  broadcast_id: string | null;
  trace_context: string | null;
}

/** The columns every reader selects. */
export const NOTIFICATION_COLUMNS = `seq, id, tenant, channel, priority, status, recipient, template_key,
  template_version, locale, content, variables, metadata, category, request_hash, scheduled_at, expires_at, attempts,
  holds, next_attempt_at, provider, provider_message_id, created_at, updated_at, broadcast_id, trace_context`;

/** A notification's metadata as every answer shows it: `{}` when none was sent. */
export function metadataOf(text: string | null): Record<string, unknown> {
  return text === null ? {} : JSON.parse(text);
}

/** Maps a row to the domain record (JSON columns parsed, rank back to priority). */
export function notificationFromRow(row: NotificationRow): NotificationRecord {
  const record: NotificationRecord = {
    seq: row.seq,
    id: row.id,
    tenant: row.tenant,
    channel: row.channel as Channel,
    priority: priorityOf(row.priority),
    status: row.status as Status,
    recipient: JSON.parse(row.recipient),
    templateKey: row.template_key,
    templateVersion: row.template_version,
    locale: row.locale ?? null,
    content: row.content === null ? null : JSON.parse(row.content),
    variables: row.variables === null ? {} : JSON.parse(row.variables),
    metadata: metadataOf(row.metadata),
    category: row.category ?? null,
    scheduledAt: row.scheduled_at,
    expiresAt: row.expires_at,
    attempts: row.attempts,
    holds: row.holds,
    nextAttemptAt: row.next_attempt_at,
    provider: row.provider,
    providerMessageId: row.provider_message_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.broadcast_id !== null) record.broadcastId = row.broadcast_id;
  if (row.trace_context) record.traceContext = row.trace_context;
  return record;
}

/** A `notification_events` row. */
export interface EventRow {
  type: string;
  at: number;
  attempt: number | null;
  provider: string | null;
  detail: string | null;
  source: string | null;
  locale: string | null;
}

export function eventFromRow(row: EventRow): EventRecord {
  const event: EventRecord = { type: row.type as EventType, at: row.at };
  if (row.attempt !== null) event.attempt = row.attempt;
  if (row.provider !== null) event.provider = row.provider;
  if (row.detail !== null) event.detail = row.detail;
  if (row.source !== null) event.source = row.source;
  if (row.locale !== null) event.locale = row.locale;
  return event;
}

/** A template's current or pinned version, joined from `templates` and `template_versions`. */
export interface TemplateRow {
  tenant: string;
  key: string;
  channel: string;
  version: number;
  content: string;
  sample_variables: string | null;
  category: string | null;
  created_at: number;
  updated_at: number;
}

/** A template version's sample variables as stored: JSON, or NULL for none. */
export function samplesText(samples: Record<string, unknown> | null): string | null {
  return samples === null ? null : JSON.stringify(samples);
}

export function templateFromRow(row: TemplateRow | undefined): TemplateRecord | null {
  if (!row) return null;
  return {
    tenant: row.tenant,
    key: row.key,
    channel: row.channel as Channel,
    version: row.version,
    content: JSON.parse(row.content) as TemplateContent,
    sampleVariables: row.sample_variables === null ? null : JSON.parse(row.sample_variables),
    category: row.category,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A `template_locales` row: one locale variant of one template version. */
export interface VariantRow {
  key: string;
  version: number;
  locale: string;
  content: string;
  updated_at: number;
}

export function variantFromRow(row: VariantRow): TemplateVariant {
  return {
    key: row.key,
    version: row.version,
    locale: row.locale,
    content: JSON.parse(row.content) as TemplateContent,
    updatedAt: row.updated_at,
  };
}

/** A `sandbox_messages` row. */
export interface SandboxRow {
  id: number;
  notification_id: string;
  tenant: string;
  channel: string;
  recipient: string;
  content: string;
  attempt: number;
  at: number;
}

export function sandboxFromRow(r: SandboxRow): SandboxMessage {
  return {
    id: r.id,
    notificationId: r.notification_id,
    tenant: r.tenant,
    channel: r.channel as Channel,
    recipient: JSON.parse(r.recipient),
    content: JSON.parse(r.content),
    attempt: r.attempt,
    at: r.at,
  };
}

/** A `pending_reports` row: a report kept until its provider message id is recorded. */
export interface PendingReportRow {
  id: number;
  outcome: DeliveryReport['outcome'];
  detail: string | null;
  source: DeliveryReport['source'];
  reported_at: number;
  report_key: string | null;
  suppress: string | null;
}

/** Turns a kept report back into the report it was. */
export function reportFromPending(
  provider: string,
  providerMessageId: string,
  row: PendingReportRow,
): DeliveryReport {
  return {
    provider,
    providerMessageId,
    outcome: row.outcome,
    at: Number(row.reported_at),
    source: row.source,
    ...(row.detail === null ? {} : { detail: row.detail }),
    // The key it was kept under, so it is applied under the same one.
    ...(row.report_key === null ? {} : { identity: row.report_key }),
    ...(row.suppress === null ? {} : { suppress: row.suppress as SuppressionReason }),
  };
}
