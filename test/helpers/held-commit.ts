// A group commit whose flushes are held until enough has reached it, so that a test of grouping
// does not depend on how fast this machine parses requests against how fast it commits (on a slow
// machine each request could otherwise arrive after the previous commit ended). Used by the
// notification and workflow trigger group commit tests.

type Flush = (items: never[], since: number) => Promise<unknown[]>;

/**
 * Replaces `target[key]` (the store method a group commit flushes through) by one that waits,
 * up to 20 s, until the weight it was given plus the batcher's `pending()` weight reaches `total`,
 * then calls the original. Returns the restore.
 */
export function holdFlushes<K extends string, T extends Record<K, Flush>>(
  target: T,
  key: K,
  total: number,
  pending: () => number,
  weight: (item: Parameters<T[K]>[0][number]) => number = () => 1,
): () => void {
  const original = target[key];
  let entered = 0;
  const held = async (items: Parameters<T[K]>[0], since: number) => {
    for (const item of items) entered += weight(item);
    const waited = Date.now();
    while (entered + pending() < total && Date.now() - waited < 20_000) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return original.call(target, items, since);
  };
  target[key] = held as T[K];
  return () => {
    target[key] = original;
  };
}

/**
 * Load shedding as a client sees it: the first flush through `target[key]` is held open, a second
 * request queues behind it (`pending()` above 0), and a third is sent meanwhile; then the flush
 * goes on. Resolves with the three answers, the third's taken while the others waited.
 */
export async function sendWhileHeld<K extends string, T extends Record<K, Flush>, A>(
  target: T,
  key: K,
  pending: () => number,
  send: () => Promise<A>,
): Promise<{ first: A; second: A; refused: A }> {
  const original = target[key];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let entered = false;
  const held = async (items: Parameters<T[K]>[0], since: number) => {
    entered = true;
    await gate;
    return original.call(target, items, since);
  };
  target[key] = held as T[K];
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  try {
    const first = send();
    while (!entered) await tick();
    const second = send();
    while (pending() === 0) await tick();
    const refused = await send();
    release();
    return { first: await first, second: await second, refused };
  } finally {
    release();
    target[key] = original;
  }
}
