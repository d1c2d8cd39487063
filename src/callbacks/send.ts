import type { Dispatcher } from 'undici';

/**
 * Sends one request on `dispatcher` and resolves with its answer once the answer's body has been
 * read and dropped (so the connection is reused) or has broken off, or rejects with why there was
 * no answer. A dispatch handler rather than undici's request(), which builds a stream for each
 * answer's body and an async resource for each request (a script posting 50,000 to an HTTPS
 * receiver, 32 in flight: 26.0 to 27.0 µs of the poster's CPU a post with request(), 23.5 to
 * 23.8 µs with this).
 */
export function send(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  deadline: Deadline,
): Promise<number> {
  return new Promise((resolve, reject) => {
    let answered: number | undefined;
    // A request undici sends again (a pipelined one whose connection closed) starts again.
    let current: Dispatcher.DispatchController | undefined;
    let unwatch: (() => void) | undefined;
    const settle = () => unwatch?.();
    dispatcher.dispatch(options, {
      onRequestStart(controller) {
        current = controller;
        const { signal } = deadline;
        if (signal.aborted) return controller.abort(signal.reason);
        unwatch ??= deadline.watch((reason) => current?.abort(reason));
      },
      onResponseStart(_controller, statusCode) {
        // A 1xx is not the answer; the answer follows it.
        if (statusCode >= 200) answered = statusCode;
      },
      onResponseEnd() {
        settle();
        resolve(answered as number);
      },
      // An answer whose body broke off (or outlived the deadline) still counts: its status came.
      onResponseError(_controller, error) {
        settle();
        if (answered !== undefined) resolve(answered);
        else reject(error);
      },
    });
  });
}

/** Requests that start within this long of each other share one timeout signal. */
const SHARE_DEADLINE_MS = 100;

/** A timeout shared by the requests that started within SHARE_DEADLINE_MS of each other. */
export interface Deadline {
  signal: AbortSignal;
  /** Calls `abort` when the signal fires, until the returned function is called. */
  watch(abort: (reason: Error) => void): () => void;
}

/**
 * The deadline that ends a request with no answer after `timeoutMs`, headers and body in all.
 * One AbortSignal.timeout() a request was about 6 µs of CPU, and 4% of the sender thread's time
 * in a burst (a CPU profile of the callbacks bench), so the requests that start within
 * SHARE_DEADLINE_MS share one; it fires that much later, so each still gets its full time. The
 * signal has one listener, which aborts the requests watching: an EventTarget's add and remove
 * walk its list of listeners, which cost the sender thread 0.2 s of a 19 s burst with hundreds
 * of requests on one signal (docs/decisions/0009).
 */
export function createDeadlines(timeoutMs: number, shareMs = SHARE_DEADLINE_MS): () => Deadline {
  let current: Deadline | undefined;
  let startedAt = Number.NEGATIVE_INFINITY;
  return () => {
    const now = performance.now();
    if (current === undefined || now - startedAt >= shareMs) {
      const signal = AbortSignal.timeout(timeoutMs + shareMs);
      const watching = new Set<(reason: Error) => void>();
      signal.addEventListener(
        'abort',
        () => {
          for (const abort of watching) abort(signal.reason as Error);
          watching.clear();
        },
        { once: true },
      );
      current = {
        signal,
        watch(abort) {
          watching.add(abort);
          return () => watching.delete(abort);
        },
      };
      startedAt = now;
    }
    return current;
  };
}
