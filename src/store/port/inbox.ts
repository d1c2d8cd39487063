/**
 * Each recipient's in-app inbox (docs/inbox.md). A message is the stored
 * content of one `inapp` notification, written by its completion in the same transaction as its
 * `DELIVERED` event, so the message and the status agree after any crash. Its ID is the
 * notification's ID. Times are epoch milliseconds.
 */
export interface InboxMessage {
  /** The notification's ID. */
  id: string;
  tenant: string;
  recipientId: string;
  title: string;
  body: string;
  url: string | null;
  data: Record<string, unknown> | null;
  category: string | null;
  createdAt: number;
  seenAt: number | null;
  readAt: number | null;
  archivedAt: number | null;
}

/** `GET /inbox?filter=`: `all` (the default) leaves archived messages out; only `archived` lists them. */
export type InboxFilter = 'all' | 'unread' | 'unseen' | 'archived';

/** What one message's action does: reading also marks it seen. */
export type InboxAction = 'seen' | 'read' | 'unread' | 'archive' | 'unarchive';

/** Archived messages count neither as unread nor as unseen. */
export interface InboxCounts {
  unread: number;
  unseen: number;
}

/** Where a page of an inbox starts: after this message, newest first (createdAt, then id, descending). */
export interface InboxPosition {
  createdAt: number;
  id: string;
}

export interface InboxStore {
  /** A recipient's messages, newest first, after `after` (exclusive). */
  list(
    tenant: string,
    recipientId: string,
    options: { filter: InboxFilter; limit: number; after?: InboxPosition },
  ): Promise<InboxMessage[]>;
  counts(tenant: string, recipientId: string): Promise<InboxCounts>;
  /** One message of this recipient, or null (another recipient's message is null too). */
  get(tenant: string, recipientId: string, id: string): Promise<InboxMessage | null>;
  /**
   * Applies an action to one message of this recipient in one transaction: the message's change
   * and, when it changed, the notification's `SEEN`, `READ` or `ARCHIVED` event in the status log
   * (so callbacks and the live stream report it). Null when the recipient has no such message.
   */
  act(
    tenant: string,
    recipientId: string,
    id: string,
    action: InboxAction,
    now: number,
  ): Promise<{ message: InboxMessage; changed: boolean } | null>;
  /** `seen-all`, `read-all`: every message that changes, with its events; the number changed. */
  actAll(tenant: string, recipientId: string, action: 'seen' | 'read', now: number): Promise<number>;
}
