/**
 * An in-process wake-up signal: ingest calls `notify()` after each commit so an idle worker
 * claims at once instead of waiting for its poll interval. With PostgreSQL, LISTEN/NOTIFY
 * feeds the same signal across processes; polling stays as the backstop.
 */
export interface Wakeup {
  notify(): void;
  /** Resolves on the next notify() or after `ms`, whichever comes first (or when `signal` aborts). */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The side of a wake-up that ingest and the admin routes use: they signal, the worker waits. */
export type WakeSignal = Pick<Wakeup, 'notify'>;

export function createWakeup(): Wakeup {
  let waiters: Array<() => void> = [];
  let pending = false;
  return {
    notify() {
      if (waiters.length === 0) {
        pending = true;
        return;
      }
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
    },
    wait(ms: number, signal?: AbortSignal) {
      if (pending) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        // Whichever ends the wait removes the waiter and its timer, so none linger.
        const finish = () => {
          clearTimeout(timer);
          waiters = waiters.filter((w) => w !== done);
          signal?.removeEventListener('abort', finish);
          resolve();
        };
        const timer = setTimeout(finish, ms);
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', finish);
          resolve();
        };
        waiters.push(done);
        signal?.addEventListener('abort', finish, { once: true });
      });
    },
  };
}
