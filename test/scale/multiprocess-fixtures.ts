import { CHANNELS, PRIORITIES } from '../../src/notifications/model.ts';
import type { Sql } from '../../src/store/postgres/connect.ts';

/**
 * How long one claim cycle may take on a loaded 2-core machine. A CRITICAL that has been ready
 * for longer than this must be claimed before any LOW (docs/dispatch.md).
 */
export const CLAIM_CYCLE_MS = 1000;

/** Request bodies `start..start+count`, cycling through the 12 priority and channel pairs. */
export function bodies(start: number, count: number, tag = 'user'): object[] {
  return Array.from({ length: count }, (_, k) => {
    const i = start + k;
    const channel = CHANNELS[i % 3] as string;
    const priority = PRIORITIES[Math.floor(i / 3) % 4] as string;
    // Phone digits: +999 05 1500 is the sandbox's 1.5 s delay code; plain numbers deliver at once.
    const delayed = tag.startsWith('delay-');
    const recipient =
      channel === 'email'
        ? { email: `${tag}-${i}@example.com` }
        : channel === 'sms'
          ? { phone: delayed ? '+999051500' : `+1555${String(i).padStart(7, '0')}` }
          : { deviceToken: `${tag}-token-${i}`, platform: 'fcm' };
    const content =
      channel === 'email'
        ? { subject: 'Hello', text: `message ${i}` }
        : channel === 'sms'
          ? { text: `message ${i}` }
          : { title: 'Hello', body: `message ${i}` };
    return { channel, priority, recipient, content };
  });
}

/**
 * LOW notifications claimed (PROCESSING event) while a CRITICAL, ready since more than one
 * claim cycle earlier, was still waiting for its own claim. Ready means accepted and not
 * scheduled; the claim is the first PROCESSING event.
 */
export async function priorityInversions(sql: Sql): Promise<Array<{ low: string; critical: string }>> {
  return sql<Array<{ low: string; critical: string }>>`
    WITH claims AS (
      SELECT n.id, n.priority, n.created_at, min(e.at) AS claimed_at
        FROM notifications n JOIN notification_events e ON e.notification_seq = n.seq AND e.type = 'PROCESSING'
       WHERE n.priority IN (0, 3) AND n.scheduled_at IS NULL
       GROUP BY n.id, n.priority, n.created_at)
    SELECT l.id AS low, c.id AS critical
      FROM claims l JOIN claims c ON c.priority = 0 AND l.priority = 3
     WHERE l.claimed_at > c.created_at + ${CLAIM_CYCLE_MS} AND l.claimed_at < c.claimed_at
     LIMIT 5`;
}
