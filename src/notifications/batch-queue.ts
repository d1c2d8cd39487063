import { Turns } from '../turns.ts';

/** The two kinds of batch body the batch threads read (batch-decoder.ts). */
export type BatchKind = 'notifications' | 'recipients';

/**
 * Which waiting batch body a free batch thread reads next (issue 50, decision record 0037).
 * POST /notifications/batch and POST /recipients/batch share the batch threads, and a recipients
 * import (an admin's bulk write, up to 10 MiB) must not hold back anyone's sends, its own
 * tenant's CRITICAL batch included:
 * - notification batches go before imports, whatever their tenants (a queue per kind);
 * - imports take at most all threads but one, so a notification batch never waits for an
 *   import already being read (a thread cannot be taken back mid-body). With one thread, imports
 *   may take it: the order is then the only guarantee;
 * - within each kind, tenants take turns (Turns), as before.
 */
export class BatchQueue<T> {
  readonly #byKind: Record<BatchKind, Turns<T>> = {
    notifications: new Turns<T>(),
    recipients: new Turns<T>(),
  };
  /** How many threads imports may hold at once. */
  readonly #importThreads: number;

  constructor(threads: number) {
    this.#importThreads = Math.max(1, threads - 1);
  }

  get size(): number {
    return this.#byKind.notifications.size + this.#byKind.recipients.size;
  }

  push(kind: BatchKind, tenant: string, item: T): void {
    this.#byKind[kind].push(tenant, item);
  }

  /**
   * The body a free thread reads next, given how many threads are reading imports now;
   * undefined when only imports wait and they already hold their share of the threads.
   */
  next(importsRunning: number): T | undefined {
    if (this.#byKind.notifications.size > 0) return this.#byKind.notifications.shift();
    if (importsRunning < this.#importThreads) return this.#byKind.recipients.shift();
    return undefined;
  }

  /** Every waiting body, both kinds', emptying the queue. */
  takeAll(): T[] {
    return [...this.#byKind.notifications.takeAll(), ...this.#byKind.recipients.takeAll()];
  }
}
