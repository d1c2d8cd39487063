import { reportingName } from '../notifications/delivery-report.ts';
import type { ProviderDeps } from '../providers/types.ts';
import type { Store } from '../store/port/index.ts';
import type { Completion } from '../store/port/queue.ts';

/**
 * After SENT completions are written, applies delivery reports that arrived before their provider
 * message id was recorded (a fast webhook can beat the completion).
 */
export async function followUp(
  store: Store,
  completions: readonly Completion[],
  stale: readonly number[],
  now: number,
  log: ProviderDeps['log'],
): Promise<void> {
  const skip = new Set(stale);
  const ids = new Map<string, string[]>();
  for (const c of completions) {
    if (c.kind !== 'sent' || !c.providerMessageId || skip.has(c.seq)) continue;
    // Reports wait under the name they arrive with (a fallback's, under its primary's).
    const provider = reportingName(c.provider);
    const list = ids.get(provider) ?? [];
    list.push(c.providerMessageId);
    ids.set(provider, list);
  }
  for (const [provider, list] of ids) {
    try {
      await store.reports.applyPending(provider, list, now);
    } catch (error) {
      log.warn({ err: error, provider }, 'applying pending delivery reports failed');
    }
  }
}
