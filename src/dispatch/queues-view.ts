import { priorityOf } from '../notifications/model.ts';
import type { Store } from '../store/port/index.ts';

/**
 * The GET /admin/queues body (and `herald queues`): the 16 priority × channel queues, counting
 * every tenant's notifications or only `tenant`'s.
 */
export async function queuesView(store: Store, now: number, tenant?: string) {
  const stats = await store.queue.stats(tenant, now);
  const age = (createdAt: number | null) => (createdAt === null ? null : Math.max(0, now - createdAt));
  return {
    queues: stats.map((s) => ({
      priority: priorityOf(s.priority),
      channel: s.channel,
      depth: s.depth,
      oldestAgeMs: age(s.oldestCreatedAt),
      scheduled: s.scheduled,
      oldestDueAgeMs: age(s.oldestDueCreatedAt),
      inFlight: s.inFlight,
      paused: s.paused,
    })),
  };
}
