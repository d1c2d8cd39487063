import type { Clock } from '../clock.ts';
import { changeOf, type StatusChange } from '../notifications/changes.ts';
import type { CallbackRecord, NewCallbackMessage } from '../store/port/callbacks.ts';
import type { Store } from '../store/port/index.ts';
import { messageId } from './signing.ts';

/** Log rows one fan-out step reads. */
export const FANOUT_PAGE = 1000;

/** The body of a callback message: `{ type, timestamp, data }`, fixed when the message is made. */
function callbackBody(change: StatusChange): string {
  return JSON.stringify({ type: 'notification.status', timestamp: change.event.at, data: change });
}

/**
 * One step of the fan-out: the status log after the fan-out's cursor becomes one message per
 * matching callback, added with the cursor's move in one transaction (CallbackStore.fanOut). The
 * log is the outbox: a status change and its event commit together, so a crash between the
 * change and this step loses nothing, and a crash inside it repeats it whole. With several
 * workers the cursor's compare-and-set lets one of them win each step. `callbacks` are the
 * enabled ones, read once by the caller's pass. Returns the rows read.
 */
export async function fanOutStep(
  store: Store,
  clock: Clock,
  callbacks: readonly CallbackRecord[],
): Promise<number> {
  const from = await store.callbacks.fanoutCursor();
  const now = clock.now();
  if (from === null || callbacks.length === 0) {
    // Nothing to report to: keep up with the log without reading it, so a callback made later
    // gets changes from its creation on, not the history before it.
    const head = await store.statusLog.head();
    if (from === null || store.statusLog.compare(head, from) > 0)
      await store.callbacks.fanOut(from, head, [], now);
    return 0;
  }
  const rows = await store.statusLog.read(from, { limit: FANOUT_PAGE });
  const last = rows.at(-1);
  if (!last) return 0;
  const byTenant = new Map<string, CallbackRecord[]>();
  for (const callback of callbacks) {
    byTenant.set(callback.tenant, [...(byTenant.get(callback.tenant) ?? []), callback]);
  }
  const messages: NewCallbackMessage[] = [];
  for (const row of rows) {
    const listening = byTenant.get(row.tenant);
    if (!listening) continue;
    const change = changeOf(row);
    if (!change) continue;
    let body: string | undefined;
    for (const callback of listening) {
      if (row.at < callback.createdAt || !callback.events.includes(change.status)) continue;
      body ??= callbackBody(change);
      messages.push({
        id: messageId(),
        callbackId: callback.id,
        notificationId: change.notificationId,
        body,
      });
    }
  }
  await store.callbacks.fanOut(from, last.cursor, messages, now);
  return rows.length;
}
