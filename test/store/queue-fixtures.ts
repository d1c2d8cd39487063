import { randomUUID } from 'node:crypto';
import type { Channel, Priority, Recipient } from '../../src/notifications/model.ts';
import type { Store } from '../../src/store/port/index.ts';
import {
  type EncodedNotification,
  encodeNotification,
  type NewNotification,
} from '../../src/store/port/notifications.ts';
import { type ClaimBudget, type CycleInput, everyPriority } from '../../src/store/port/queue.ts';

export const T0 = Date.UTC(2026, 0, 1);

/** A claim budget with room for everything: 100 of each priority and channel. */
export const ALL: ClaimBudget = {
  perPriority: [100, 100, 100, 100],
  sharedLimit: 100,
  perChannel: everyPriority({ email: 100, sms: 100, push: 100 }),
};

const RECIPIENT: Record<Channel, Recipient> = {
  email: { email: 'ada@example.com' },
  sms: { phone: '+15551234567' },
  push: { deviceToken: 'a'.repeat(64), platform: 'apns' },
  inapp: { id: 'ada' },
};

/** A notification as ingest would store it; `over` changes any field. */
export function newNotification(over: Partial<NewNotification> = {}): EncodedNotification {
  const channel = over.channel ?? 'email';
  return encodeNotification({
    id: randomUUID(),
    tenant: 't1',
    channel,
    priority: 'NORMAL' as Priority,
    recipient: RECIPIENT[channel],
    templateKey: null,
    templateVersion: null,
    content:
      channel === 'email'
        ? { subject: 'Hi {{ name }}', text: 'Hello {{ name }}' }
        : { text: 'hi', title: 't', body: 'b' },
    variables: { name: 'Ada' },
    metadata: null,
    idempotencyKey: null,
    requestHash: null,
    scheduledAt: null,
    expiresAt: null,
    createdAt: T0,
    ...over,
  });
}

/**
 * One queue cycle as a worker `w1` runs it at T0 + 1 s with a 30 s lease, claiming with the
 * budget `ALL` and completing nothing, unless `over` says otherwise.
 */
export function cycle(store: Store, over: Partial<CycleInput> = {}) {
  return store.queue.cycle({
    owner: 'w1',
    now: T0 + 1000,
    leaseUntil: T0 + 31_000,
    completions: [],
    maxAttempts: 3,
    claim: ALL,
    ...over,
  });
}

/** Inserts notifications in one transaction through the ingest port; returns their ids in order. */
export async function seedMany(store: Store, items: EncodedNotification[]): Promise<string[]> {
  await store.notifications.insertMany(items, 0);
  return items.map((n) => n.id);
}

/** The stored state and events of one notification (tenant t1 unless given). */
export async function read(store: Store, id: string, tenant = 't1') {
  const found = await store.notifications.get(tenant, id);
  if (!found) throw new Error(`notification ${id} not found`);
  return found;
}
