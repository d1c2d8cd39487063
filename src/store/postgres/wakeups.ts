import type { WakeupChannel } from '../port/wakeups.ts';
import type { Sql } from './connect.ts';

/** The NOTIFY channel ingest signals on (in its transaction, so the hint arrives after commit). */
export const WAKEUP_CHANNEL = 'herald_wakeup';

/** The payload of a wake-up whose commit included CRITICAL or HIGH rows (else it is empty). */
export const URGENT_PAYLOAD = 'urgent';

/** The payload of a workflow trigger's wake-up: its runs are the workflow engine's to step. */
export const RUNS_PAYLOAD = 'runs';

/** The channel a trigger on notification_events signals, once per transaction (migration 140). */
export const STATUS_CHANNEL = 'herald_status';

/** LISTEN on a connection of its own; postgres.js re-listens after a reconnect. */
export function createPostgresWakeups(sql: Sql, channel: string): WakeupChannel {
  return {
    async subscribe(onWake) {
      const { unlisten } = await sql.listen(channel, (payload) =>
        onWake(payload === URGENT_PAYLOAD ? 'urgent' : payload === RUNS_PAYLOAD ? 'runs' : undefined),
      );
      return unlisten;
    },
  };
}
