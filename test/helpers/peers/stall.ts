/**
 * A peer's slowness, scripted per message: `delay(key)` says how long the peer waits before it
 * answers (Infinity: until `release()`, a stalled provider). Peers call `wait(key)`.
 */
export interface Stall {
  /** Milliseconds to wait for this recipient or subscription; 0 or absent answers at once. */
  delay: (key: string) => number;
  /** How many answers are held right now. */
  readonly held: number;
  wait(key: string): Promise<void>;
  /** Lets every stalled answer go. */
  release(): void;
}

export function createStall(): Stall {
  const stalled = new Set<() => void>();
  let held = 0;
  return {
    delay: () => 0,
    get held() {
      return held;
    },
    async wait(key) {
      const ms = this.delay(key);
      if (!(ms > 0)) return;
      held += 1;
      try {
        await new Promise<void>((resolve) => {
          if (ms === Number.POSITIVE_INFINITY) stalled.add(resolve);
          else setTimeout(resolve, ms);
        });
      } finally {
        held -= 1;
      }
    },
    release() {
      for (const resolve of stalled) resolve();
      stalled.clear();
    },
  };
}
