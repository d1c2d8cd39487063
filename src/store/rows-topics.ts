import { type Channel, priorityOf } from '../notifications/model.ts';
import type { BroadcastRecord, BroadcastStatus, FanOutStep } from './port/broadcasts.ts';
import type { SubscriberRecord, TopicRecord } from './port/topics.ts';

type Int = number | string;

/** A topics row as both adapters select it. */
export interface TopicRow {
  tenant: string;
  topic_key: string;
  name: string | null;
  subscribers: Int;
  created_at: Int;
  updated_at: Int;
}

/**
 * Memberships a topic's erasure deletes in one transaction (`remove` of both adapters): a topic of
 * 1,000,000 held SQLite's writer 3 s in one transaction (under load); a chunk this size holds it
 * a few milliseconds.
 */
export const PURGE_CHUNK = 1000;

export const TOPIC_COLUMNS = 'tenant, topic_key, name, subscribers, created_at, updated_at';

export function topicFromRow(row: TopicRow): TopicRecord {
  return {
    tenant: row.tenant,
    key: row.topic_key,
    name: row.name,
    subscribers: Number(row.subscribers),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export interface SubscriberRow {
  recipient_id: string;
  created_at: Int;
}

export const subscriberFromRow = (row: SubscriberRow): SubscriberRecord => ({
  recipientId: row.recipient_id,
  subscribedAt: Number(row.created_at),
});

/** A broadcasts row as both adapters select it (BROADCAST_COLUMNS). */
export interface BroadcastRow {
  seq: Int;
  id: string;
  tenant: string;
  topic_key: string;
  status: string;
  channel: string;
  priority: number;
  template_key: string | null;
  template_version: number | null;
  content: string | null;
  variables: string | null;
  metadata: string | null;
  category: string | null;
  locale: string | null;
  scheduled_at: Int | null;
  expires_at: Int | null;
  recipients: Int | null;
  created: Int;
  fanned_to: string;
  until_seq: Int | null;
  cancelled_to: Int;
  created_at: Int;
  updated_at: Int;
}

export const BROADCAST_COLUMNS = `seq, id, tenant, topic_key, status, channel, priority, template_key,
  template_version, content, variables, metadata, category, locale, scheduled_at, expires_at, recipients, created, fanned_to,
  until_seq, cancelled_to, created_at, updated_at`;

const numberOrNull = (value: Int | null) => (value === null ? null : Number(value));

export function broadcastFromRow(row: BroadcastRow): BroadcastRecord {
  return {
    id: row.id,
    tenant: row.tenant,
    topic: row.topic_key,
    status: row.status as BroadcastStatus,
    channel: row.channel as Channel,
    priority: priorityOf(Number(row.priority)),
    recipients: numberOrNull(row.recipients),
    created: Number(row.created),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** The notification columns a fan-out chunk copies from its broadcast, by name, for either dialect. */
export function fannedValues(b: BroadcastRow) {
  const waiting = b.scheduled_at !== null && Number(b.scheduled_at) > Number(b.created_at);
  return {
    tenant: b.tenant,
    channel: b.channel,
    priority: Number(b.priority),
    queueState: waiting ? 'waiting' : 'ready',
    dueAt: waiting ? Number(b.scheduled_at) : null,
    waiting,
    templateKey: b.template_key,
    templateVersion: b.template_version,
    content: b.content,
    variables: b.variables,
    metadata: b.metadata,
    category: b.category,
    locale: b.locale,
    scheduledAt: numberOrNull(b.scheduled_at),
    expiresAt: numberOrNull(b.expires_at),
    broadcastId: b.id,
  };
}

/** What a fan-out step of broadcast `b` tells the worker (port/broadcasts.ts FanOutStep). */
export function stepOf(b: BroadcastRow, made: number, cancelled: number, finished: boolean): FanOutStep {
  return {
    broadcastId: b.id,
    tenant: b.tenant,
    priority: priorityOf(Number(b.priority)),
    made,
    cancelled,
    finished,
  };
}
