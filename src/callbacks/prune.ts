import type { SenderCallbacks } from './sender-store.ts';

/**
 * Attempts (GET /callbacks/{id}/deliveries) and settled outbox messages are kept this long, then
 * pruned: each pass while there is more to prune, in steps of PRUNE_STEP rows a table, else once
 * an hour.
 */
const CALLBACK_HISTORY_MS = 7 * 24 * 60 * 60 * 1000;
const PRUNE_STEP = 10_000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/** The sender's pruning of callback history: call it each pass; it prunes when due. */
export function createPruner(store: Pick<SenderCallbacks, 'prune'>): (now: number) => Promise<void> {
  let pruneAt = 0;
  return async (now) => {
    if (now < pruneAt) return;
    const pruned = await store.prune(now - CALLBACK_HISTORY_MS, PRUNE_STEP);
    pruneAt = pruned > 0 ? now : now + PRUNE_EVERY_MS;
  };
}
