/**
 * Wake-up hints between processes. With PostgreSQL every ingest commit (and every workflow
 * trigger) sends one NOTIFY and worker processes LISTEN, so an idle worker elsewhere claims (or
 * steps the trigger's runs) at once. A hint only: it can be
 * lost (a reconnect) and workers keep polling as the backstop. SQLite runs in one process,
 * where the in-process signal (src/notifications/wakeup.ts) already does this, so its channel is silent.
 */
export interface WakeupChannel {
  /** Calls `onWake` on each hint from any process until the returned function is called. */
  subscribe(onWake: (hint?: WakeHint) => void): Promise<() => Promise<void>>;
}

/**
 * What a hint says beyond "rows were committed": `urgent`, they include CRITICAL or HIGH ones
 * (notifications/wakeup.ts); `runs`, a workflow trigger committed runs, which the workflow
 * engine takes, not the claim loop (so the claim loop is not woken for them).
 */
export type WakeHint = 'urgent' | 'runs';
