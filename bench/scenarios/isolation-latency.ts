import { type Api, getNotification } from '../lib/api.ts';
import { progress } from '../lib/log.ts';
import type { PacedResult } from '../lib/paced.ts';

/** Acceptance-to-provider-call latencies of the given notifications, from their events. */
export interface Latencies {
  values: number[];
  /** Notifications with no PROCESSING event before the deadline. */
  unprocessed: number;
}

/**
 * Polls GET /notifications/{id} for every CRITICAL the paced sender got accepted until each has
 * a PROCESSING event (or `deadlineMs` passes), then takes PROCESSING.at - createdAt for each:
 * the figure the issue asks for. None accepted is a failed run, with the sender's failures.
 */
export async function criticalLatencies(
  api: Api,
  critical: PacedResult,
  deadlineMs = 60_000,
): Promise<Latencies> {
  if (critical.accepted.length === 0)
    throw new Error(`no CRITICAL accepted: ${critical.failures.join('; ')}`);
  const values: number[] = [];
  let waiting = critical.accepted.map((c) => c.id);
  const deadline = Date.now() + deadlineMs;
  while (waiting.length > 0) {
    const still: string[] = [];
    for (let i = 0; i < waiting.length; i += 16) {
      const views = await Promise.all(waiting.slice(i, i + 16).map((id) => getNotification(api, id)));
      for (const view of views) {
        const processing = view.events.find((e) => e.type === 'PROCESSING');
        if (processing) values.push(Date.parse(processing.at) - Date.parse(view.createdAt));
        else still.push(view.notificationId);
      }
    }
    waiting = still;
    if (waiting.length === 0 || Date.now() > deadline) break;
    progress(`isolation: ${waiting.length} CRITICAL not processed yet, waiting`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return { values, unprocessed: waiting.length };
}
