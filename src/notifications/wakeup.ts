/**
 * An in-process wake-up signal: ingest calls `notify()` after each commit so an idle worker
 * claims at once instead of waiting for its poll interval. With PostgreSQL, LISTEN/NOTIFY
 * feeds the same signal across processes; polling stays as the backstop.
 */
import { type Priority, priorityRank } from './model.ts';

/**
 * CRITICAL and HIGH: committing one wakes the worker's urgent lane, and the worker writes their
 * completions and claims them in that lane, apart from the bulk (dispatch/scheduler.ts).
 */
export const isUrgent = (priority: Priority): boolean => priorityRank(priority) <= 1;

export interface Wakeup {
  /**
   * `urgent`: what was committed includes CRITICAL or HIGH rows, so a worker busy with a step
   * claims them in its urgent lane at once instead of after that step (dispatch/scheduler.ts).
   */
  notify(urgent?: boolean): void;
  /** Calls `listener` on each urgent notify() until the returned function is called. */
  onUrgent(listener: () => void): () => void;
  /** Resolves on the next notify() or after `ms`, whichever comes first (or when `signal` aborts). */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The side of a wake-up that ingest and the admin routes use: they signal, the worker waits. */
export type WakeSignal = Pick<Wakeup, 'notify'>;

export function createWakeup(): Wakeup {
  let waiters: Array<() => void> = [];
  let pending = false;
  const urgentListeners = new Set<() => void>();
  return {
    notify(urgent = false) {
      if (urgent) for (const listener of urgentListeners) listener();
      if (waiters.length === 0) {
        pending = true;
        return;
      }
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
    },
    onUrgent(listener) {
      urgentListeners.add(listener);
      return () => urgentListeners.delete(listener);
    },
    wait(ms: number, signal?: AbortSignal) {
      // Already stopped (an abort between a loop's check and its wait): an 'abort' listener
      // would never fire, and the wait would last the whole `ms`.
      if (signal?.aborted) return Promise.resolve();
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
