import type { Channel, Priority, Status } from '../../notifications/model.ts';

/** Where a broadcast is (docs/topics.md): accepted, fanning out, every notification made, or cancelled. */
export const BROADCAST_STATUSES = ['QUEUED', 'FANNING_OUT', 'DONE', 'CANCELLED'] as const;
export type BroadcastStatus = (typeof BROADCAST_STATUSES)[number];

/**
 * A validated broadcast ready to store: the notification each subscriber gets, its JSON columns
 * serialized as a notification's are. Times are epoch ms.
 */
export interface NewBroadcast {
  id: string;
  tenant: string;
  topic: string;
  channel: Channel;
  priority: Priority;
  templateKey: string | null;
  templateVersion: number | null;
  content: string | null;
  variables: string | null;
  metadata: string | null;
  category: string | null;
  locale: string | null;
  scheduledAt: number | null;
  expiresAt: number | null;
  createdAt: number;
  /** The `traceparent` of the request that made it (docs/tracing.md): its notifications carry it. */
  traceContext?: string | null;
}

/** A broadcast as stored. */
export interface BroadcastRecord {
  id: string;
  tenant: string;
  topic: string;
  status: BroadcastStatus;
  channel: Channel;
  priority: Priority;
  /** Subscribers when the fan-out started; null before it starts. */
  recipients: number | null;
  /** Notifications made so far. */
  created: number;
  createdAt: number;
  updatedAt: number;
}

/** What one fan-out step did: notifications made or cancelled for one broadcast. */
export interface FanOutStep {
  broadcastId: string;
  tenant: string;
  priority: Priority;
  made: number;
  cancelled: number;
  /** The broadcast has no work left (its fan-out is done, or its cancel is). */
  finished: boolean;
}

/**
 * Broadcasts and their durable fan-out (src/recipients/fan-out.ts). Each step is one
 * transaction: a chunk of the topic's snapshot made into notifications and the broadcast's
 * cursor moved past it, or a chunk of a cancelled broadcast's waiting notifications cancelled.
 * A crash loses only an uncommitted step, which the next one redoes; on PostgreSQL a step locks
 * its broadcast (FOR UPDATE SKIP LOCKED), so two workers never make the same chunk.
 */
export interface BroadcastStore {
  /** Stores a broadcast (QUEUED); 'topic' when the topic does not exist, 'empty' when it has no subscriber. */
  create(broadcast: NewBroadcast): Promise<'created' | 'topic' | 'empty'>;
  get(tenant: string, id: string): Promise<BroadcastRecord | null>;
  /** Its notifications by current status (statuses with none left out). */
  counts(tenant: string, id: string): Promise<Partial<Record<Status, number>>>;
  /**
   * Cancels a broadcast: its fan-out stops, and the steps that follow cancel its notifications
   * not yet sent. Null when there is no such broadcast; one already cancelled is left as it is.
   */
  cancel(tenant: string, id: string, now: number): Promise<BroadcastRecord | null>;
  /** Whether some broadcast has work left (a cheap read, before a step's transaction). */
  hasWork(): Promise<boolean>;
  /**
   * One step of the broadcast with work left that waited longest, at most `chunk` rows; null: none
   * free. `inTurn`: the step's rows are made while no other worker's step makes any (PostgreSQL:
   * a lock every worker's range takes in turn, while urgent work arrives; SQLite has one writer
   * and ignores it).
   */
  step(now: number, chunk: number, inTurn?: boolean): Promise<FanOutStep | null>;
}
