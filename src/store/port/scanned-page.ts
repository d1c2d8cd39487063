/**
 * Rows one filtered list read looks at, at most (a tenant's notifications, sandbox messages or
 * suppressions, newest first): a filter that matches few of millions reads them some thousands a
 * page (about 2 ms on SQLite), not all in one statement on the event loop that serves every tenant.
 */
export const LIST_SCAN = 10_000;

/** One list read that may stop after LIST_SCAN rows. */
export interface ScannedPage<T> {
  /** Newest first, at most the limit. */
  items: T[];
  /**
   * Set when the read stopped after LIST_SCAN rows with fewer items than the limit: the key of
   * the last row it looked at; the next page is below it.
   */
  scannedTo?: number;
}

/**
 * The page of a read that looked at rows from `floor` up (the key of the LIST_SCAN-th newest in
 * its range, undefined when there were fewer) and found `items`, fetching at most `limit`.
 */
export const scannedPage = <T>(items: T[], limit: number, floor: number | undefined): ScannedPage<T> =>
  items.length < limit && floor !== undefined ? { items, scannedTo: floor } : { items };
