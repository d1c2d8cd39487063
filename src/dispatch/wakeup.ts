/**
 * An in-process wake-up signal: ingest calls `notify()` after each commit so an idle worker
 * claims at once instead of waiting for its poll interval. With PostgreSQL, LISTEN/NOTIFY
 * feeds the same signal across processes; polling stays as the backstop.
 */
export interface Wakeup {
  notify(): void;
  /** Resolves on the next notify() or after `ms`, whichever comes first. */
  wait(ms: number): Promise<void>;
}

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
    wait(ms: number) {
      if (pending) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== done);
          resolve();
        }, ms);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        waiters.push(done);
      });
    },
  };
}
