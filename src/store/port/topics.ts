/** A topic as stored (docs/topics.md). Times are epoch milliseconds. */
export interface TopicRecord {
  tenant: string;
  key: string;
  name: string | null;
  /** How many recipients are subscribed: a counter kept with the memberships. */
  subscribers: number;
  createdAt: number;
  updatedAt: number;
}

/** One subscriber of a topic. */
export interface SubscriberRecord {
  recipientId: string;
  subscribedAt: number;
}

/**
 * A tenant's topics and their subscribers (src/recipients/topic-routes.ts). A membership names a
 * recipient of the same tenant; erasing the recipient erases its memberships (RecipientStore.remove).
 */
export interface TopicStore {
  /** Creates a topic or renames it; says whether it was created. */
  put(
    tenant: string,
    key: string,
    name: string | null,
    now: number,
  ): Promise<{ record: TopicRecord; created: boolean }>;
  get(tenant: string, key: string): Promise<TopicRecord | null>;
  /** A tenant's topics in key order, after `after` (exclusive). */
  list(tenant: string, options: { limit: number; after?: string }): Promise<TopicRecord[]>;
  /**
   * Erases a topic and its memberships. False when there was none. The topic goes at once (its
   * reads, subscribes and broadcasts find none); its memberships go after, in transactions of
   * `PURGE_CHUNK` (store/rows-topics.ts), so that a topic of a million never holds a writer for long. A crash
   * meanwhile leaves memberships of no topic, which nothing reads and `put` clears before it
   * makes a topic of that key again.
   */
  remove(tenant: string, key: string): Promise<boolean>;
  /**
   * Subscribes the recipients among `ids` in one transaction (one statement for the batch):
   * `added` counts the new memberships (one already subscribed is not counted again), `unknown`
   * lists the IDs that name no recipient of the tenant, in input order. Null: no such topic.
   */
  subscribe(
    tenant: string,
    key: string,
    ids: readonly string[],
    now: number,
  ): Promise<{ added: number; unknown: string[] } | null>;
  /** Ends a membership: 'topic' when there is no such topic, 'member' when it was none, else 'done'. */
  unsubscribe(tenant: string, key: string, id: string): Promise<'done' | 'topic' | 'member'>;
  /** A topic's subscribers in ID order after `after` (exclusive); null when there is no such topic. */
  subscribers(
    tenant: string,
    key: string,
    options: { limit: number; after?: string },
  ): Promise<SubscriberRecord[] | null>;
}
