// A scheduler step held inside its PostgreSQL transaction by a lock another connection holds: the
// deterministic gate of the urgent lane's tests (test/dispatch/urgent-*.test.ts), which show the
// lane going on while a LOW step waits. Nothing is timed: the step waits until released.
import postgres from 'postgres';
import type { Sql } from '../../src/store/postgres/connect.ts';
import { eventually } from './eventually.ts';

export interface HeldStep {
  /** The step has ended (it should not have, until `release`). */
  done(): boolean;
  /** Lets the lock go and waits for the step. */
  release(): Promise<void>;
  /** Whatever failed: lets the lock go, waits for both, closes the blocking connection. */
  close(): Promise<void>;
}

/**
 * Takes a lock with `lock` on a connection of its own to `url`, starts `step`, and resolves once
 * PostgreSQL (seen through `observer`) shows a lock waited for: the step's statement that needs it.
 */
export async function holdStep(
  url: string,
  lock: (tx: postgres.TransactionSql) => Promise<unknown>,
  step: () => Promise<unknown>,
  observer: Sql,
): Promise<HeldStep> {
  const blocker = postgres(url, { max: 1, onnotice: () => undefined });
  let open: () => void = () => undefined;
  let locked: () => void = () => undefined;
  const lockTaken = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const gate = blocker.begin(async (tx) => {
    await lock(tx);
    await new Promise<void>((resolve) => {
      open = resolve;
      locked();
    });
  });
  await lockTaken;
  let ended = false;
  const held = step().finally(() => {
    ended = true;
  });
  const close = async () => {
    open();
    await Promise.allSettled([gate, held]);
    await blocker.end({ timeout: 1 });
  };
  try {
    await eventually(
      async () => {
        const [row] = await observer<
          { n: number }[]
        >`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`;
        return (row?.n ?? 0) > 0;
      },
      30_000,
      'the step to wait for the lock',
    );
  } catch (error) {
    await close();
    throw error;
  }
  return {
    done: () => ended,
    async release() {
      open();
      await gate;
      await held;
    },
    close,
  };
}
