import type { Clock } from '../../clock.ts';

/** Admits at most `limit` starts in any rolling `windowMs`, first come first served. */
export interface RateWindow {
  /** Resolves true when the caller may start, false if `signal` aborted first. */
  acquire(signal: AbortSignal): Promise<boolean>;
}

/**
 * A sliding-window limiter kept next to the connection pool. nodemailer's own pool limit resets
 * a fixed window and lets up to twice the rate through at its edge (seen in the burst test), so
 * the provider keeps the start times of its last `limit` sends instead and never exceeds the rate
 * in any window, whatever the scheduler in front of it does.
 */
export function createRateWindow(limit: number, windowMs: number, clock: Clock): RateWindow {
  const starts: number[] = [];
  let queue: Promise<unknown> = Promise.resolve();
  const sleep = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  async function admit(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      const now = clock.now();
      while (starts.length > 0 && now - (starts[0] as number) >= windowMs) starts.shift();
      if (starts.length < limit) {
        starts.push(now);
        return true;
      }
      // Re-check at least every 100 ms: the injected clock may be moved by hand (tests), and a
      // long real-time sleep computed from it would not notice.
      await sleep(Math.min(100, windowMs - (now - (starts[0] as number))), signal);
    }
    return false;
  }
  return {
    acquire(signal) {
      const turn = queue.then(() => admit(signal));
      queue = turn.catch(() => undefined);
      return turn;
    },
  };
}
