import { type Api, getNotification, type NotificationView } from '../lib/api.ts';
import { progress } from '../lib/log.ts';
import type { PacedResult } from '../lib/paced.ts';

/** Acceptance-to-provider-call latencies of the given notifications, from their events. */
export interface Latencies {
  values: number[];
  /** Notifications with no PROCESSING event before the deadline. */
  unprocessed: number;
}

/**
 * Polls GET /notifications/{id} for each id until `done` holds for its view (or `deadlineMs`
 * passes); returns the views that got there and how many did not.
 */
export async function viewsWhen(
  api: Api,
  ids: readonly string[],
  done: (view: NotificationView) => boolean,
  what: string,
  deadlineMs = 60_000,
): Promise<{ views: NotificationView[]; waiting: number }> {
  const views: NotificationView[] = [];
  let waiting = [...ids];
  const deadline = Date.now() + deadlineMs;
  while (waiting.length > 0) {
    const still: string[] = [];
    for (let i = 0; i < waiting.length; i += 16) {
      const batch = await Promise.all(waiting.slice(i, i + 16).map((id) => getNotification(api, id)));
      for (const view of batch) {
        if (done(view)) views.push(view);
        else still.push(view.notificationId);
      }
    }
    waiting = still;
    if (waiting.length === 0 || Date.now() > deadline) break;
    progress(`${what}: ${waiting.length} not there yet, waiting`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return { views, waiting: waiting.length };
}

/** Milliseconds from a notification's acceptance to its first event of `type` (NaN: none). */
export function sinceAcceptance(view: NotificationView, type: string): number {
  const event = view.events.find((e) => e.type === type);
  return event ? Date.parse(event.at) - Date.parse(view.createdAt) : Number.NaN;
}

/**
 * Polls every CRITICAL the paced sender got accepted until each has a PROCESSING event, then
 * takes PROCESSING.at - createdAt for each: the figure the issue asks for. None accepted is a
 * failed run, with the sender's failures.
 */
export async function criticalLatencies(
  api: Api,
  critical: PacedResult,
  deadlineMs = 60_000,
): Promise<Latencies> {
  if (critical.accepted.length === 0)
    throw new Error(`no CRITICAL accepted: ${critical.failures.join('; ')}`);
  const { views, waiting } = await viewsWhen(
    api,
    critical.accepted.map((c) => c.id),
    (view) => view.events.some((e) => e.type === 'PROCESSING'),
    'isolation: CRITICAL processed',
    deadlineMs,
  );
  return { values: views.map((view) => sinceAcceptance(view, 'PROCESSING')), unprocessed: waiting };
}
