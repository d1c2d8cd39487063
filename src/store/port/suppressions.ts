import type { Channel } from '../../notifications/model.ts';
import type { Suppression, SuppressionRecord } from '../../suppressions/model.ts';
import type { ScannedPage } from './scanned-page.ts';

/** What identifies one suppression: a tenant's recipient key on a channel. */
export type SuppressionKey = Pick<Suppression, 'tenant' | 'channel' | 'recipient'>;

/** A key as one string, for maps of suppressions found by a look-up. */
export const keyText = (k: SuppressionKey) => `${k.tenant}\u0000${k.channel}\u0000${k.recipient}`;

/**
 * Suppressed recipients per tenant and channel (src/suppressions). Adding one that exists keeps
 * it, except that any other reason replaces `unsubscribe` (it stops more than LOW): a
 * suppression only ever widens.
 */
export interface SuppressionStore {
  /** Adds (or widens) suppressions; returns the stored ones, in input order. */
  add(entries: readonly Suppression[], now: number): Promise<SuppressionRecord[]>;
  /** Removes one; false when there was none. */
  remove(key: SuppressionKey): Promise<boolean>;
  /**
   * A tenant's suppressions, newest first, after the cursor id (exclusive), optionally one channel
   * or recipient; with a channel alone, LIST_SCAN rows looked at at most.
   */
  list(
    tenant: string,
    options: { channel?: Channel; recipient?: string; limit: number; before?: number },
  ): Promise<ScannedPage<SuppressionRecord>>;
  /** The suppressions among these keys (one statement, whatever their number). */
  match(keys: readonly SuppressionKey[]): Promise<SuppressionRecord[]>;
}
