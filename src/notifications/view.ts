import { createHash } from 'node:crypto';
import { iso } from '../clock.ts';
import { maskRecipient } from './mask.ts';
import type { EventRecord, NotificationRecord } from './model.ts';

const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/** The 201 body of POST /notifications (and its idempotent replay). */
export function acceptedView(n: Pick<NotificationRecord, 'id' | 'channel' | 'priority' | 'createdAt'>) {
  return {
    notificationId: n.id,
    status: 'QUEUED',
    channel: n.channel,
    priority: n.priority,
    createdAt: iso(n.createdAt),
  };
}

/** A notification as GET /notifications lists it: masked recipient, no events. */
export function summaryView(n: NotificationRecord) {
  const view = {
    notificationId: n.id,
    status: n.status,
    channel: n.channel,
    priority: n.priority,
    recipient: maskRecipient(n.recipient),
    template: n.templateKey,
    templateVersion: n.templateVersion,
    locale: n.locale,
    category: n.category,
    metadata: n.metadata,
    attempts: n.attempts,
    createdAt: iso(n.createdAt),
    updatedAt: iso(n.updatedAt),
    scheduledAt: isoOrNull(n.scheduledAt),
    expiresAt: isoOrNull(n.expiresAt),
    nextAttemptAt: isoOrNull(n.nextAttemptAt),
    provider: n.provider,
    providerMessageId: n.providerMessageId,
  };
  // Only a broadcast's notifications name one (docs/sending-to-people.md).
  return n.broadcastId === undefined ? view : { ...view, broadcastId: n.broadcastId };
}

/** An event as the API shows it: its time in ISO 8601. */
export const eventView = (e: EventRecord) => ({ ...e, at: iso(e.at) });

/** The full view with events: the implied QUEUED at acceptance first, then the stored ones in order. */
export function detailView(n: NotificationRecord, events: EventRecord[]) {
  return {
    ...summaryView(n),
    events: [{ type: 'QUEUED', at: iso(n.createdAt) }, ...events.map(eventView)],
  };
}

/** A strong ETag over the exact body: any change of status or events changes it. */
export function etagOf(body: unknown): string {
  return `"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 27)}"`;
}

/** Whether an If-None-Match header matches the ETag (a list, weak forms and `*` included). */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
