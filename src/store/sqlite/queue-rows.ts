import { type Channel, type NotificationRecord, priorityOf, type Status } from '../../notifications/model.ts';

/** A notifications row as SQLite returns it. */
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
  content: string | null;
  variables: string | null;
  metadata: string | null;
  scheduled_at: number | null;
  expires_at: number | null;
  attempts: number;
  next_attempt_at: number | null;
  provider: string | null;
  provider_message_id: string | null;
  created_at: number;
  updated_at: number;
}

/** Maps a row to the domain record the scheduler and the renderer use. */
export function toRecord(row: NotificationRow): NotificationRecord {
  return {
    seq: row.seq,
    id: row.id,
    tenant: row.tenant,
    channel: row.channel as Channel,
    priority: priorityOf(row.priority),
    status: row.status as Status,
    recipient: JSON.parse(row.recipient),
    templateKey: row.template_key,
    templateVersion: row.template_version,
    content: row.content ? JSON.parse(row.content) : null,
    variables: row.variables ? JSON.parse(row.variables) : {},
    metadata: row.metadata ? JSON.parse(row.metadata) : {},
    scheduledAt: row.scheduled_at,
    expiresAt: row.expires_at,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    provider: row.provider,
    providerMessageId: row.provider_message_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
