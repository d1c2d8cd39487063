/** One message of GET /inbox (docs/inbox-api.md). Times are ISO 8601 strings. */
export interface InboxItem {
  id: string;
  title: string;
  body: string;
  url: string | null;
  data: Record<string, unknown> | null;
  category: string | null;
  createdAt: string;
  seenAt: string | null;
  readAt: string | null;
  archivedAt: string | null;
}

/** GET /inbox/counts, and the stream's `counts` event. Archived messages count in neither. */
export interface InboxCounts {
  unread: number;
  unseen: number;
}

/** One page of GET /inbox: newest first, with the counts at the time of the read. */
export interface InboxPage extends InboxCounts {
  items: InboxItem[];
  nextCursor: string | null;
}

/** A function the host page gives: resolves to a new recipient token. */
export type TokenProvider = () => Promise<string>;
