/**
 * Wake-up hints between processes. With PostgreSQL every ingest commit sends one NOTIFY and
 * worker processes LISTEN, so an idle worker elsewhere claims at once. A hint only: it can be
 * lost (a reconnect) and workers keep polling as the backstop. SQLite runs in one process,
 * where the in-process signal (src/notifications/wakeup.ts) already does this, so its channel is silent.
 */
export interface WakeupChannel {
  /**
   * Calls `onWake` on each hint from any process until the returned function is called; `urgent`:
   * the commit included CRITICAL or HIGH rows (notifications/wakeup.ts).
   */
  subscribe(onWake: (urgent?: boolean) => void): Promise<() => Promise<void>>;
}
