import type { Api, NotificationView } from '../lib/api.ts';
import { progress } from '../lib/log.ts';

/** Acceptance-to-provider-call latencies of the given notifications, from their events. */
export interface Latencies {
  values: number[];
  /** Notifications with no PROCESSING event before the deadline. */
  unprocessed: number;
}

/**
 * Polls GET /notifications/{id} until each has a PROCESSING event (or `deadlineMs` passes),
 * then takes PROCESSING.at - createdAt for each: the figure the issue asks for.
 */
export async function criticalLatencies(
  api: Api,
  ids: readonly string[],
  get: (api: Api, id: string) => Promise<NotificationView>,
  deadlineMs = 60_000,
): Promise<Latencies> {
  const values: number[] = [];
  let waiting = [...ids];
  const deadline = Date.now() + deadlineMs;
  while (waiting.length > 0) {
    const still: string[] = [];
    for (let i = 0; i < waiting.length; i += 16) {
      const views = await Promise.all(waiting.slice(i, i + 16).map((id) => get(api, id)));
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
