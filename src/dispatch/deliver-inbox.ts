import { inboxEntryOf } from '../inbox/content.ts';
import type { Completion } from '../notifications/status.ts';
import { RenderError } from '../templates/render-error.ts';
import { type DeliverDeps, type Flight, personInput, retryOrFail } from './deliver.ts';

/**
 * Delivers an `inapp` notification (docs/inbox.md): renders it like any channel and completes it
 * as `stored`, so the next cycle commits the inbox message with its DELIVERED event in one
 * transaction. No provider is called, so there is no slot, rate limit or circuit to take: the
 * worker's slots, shared by priority (budget.ts), are all that bounds it. Never throws.
 */
export async function deliverToInbox(deps: DeliverDeps, flight: Flight): Promise<Completion> {
  const { record } = flight;
  const lease = { seq: record.seq, attempt: record.attempts };
  let rendered: Awaited<ReturnType<DeliverDeps['renderer']['render']>>;
  try {
    rendered = await deps.renderer.render(record.person ? personInput(deps, record) : record);
  } catch (error) {
    if (error instanceof RenderError) return { ...lease, kind: 'failed', detail: error.message };
    const detail = error instanceof Error ? error.message : String(error);
    return retryOrFail(deps, record, undefined, `rendering failed: ${detail}`);
  }
  const entry = inboxEntryOf(record, rendered.content);
  if ('problem' in entry) return { ...lease, kind: 'failed', detail: entry.problem };
  if (record.attempts === 1)
    deps.metrics?.pickupLatency.observe(
      { priority: record.priority },
      (deps.clock.now() - record.createdAt) / 1000,
    );
  deps.metrics?.outcomes.inc({ provider: 'inbox', outcome: 'delivered' });
  return { ...lease, kind: 'stored', message: entry, locale: rendered.locale };
}
