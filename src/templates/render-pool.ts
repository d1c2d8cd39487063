import { Worker } from 'node:worker_threads';
import type { Content } from '../channels.ts';
import { type Rank, reserveCaps, roomFor } from '../dispatch/reserve.ts';

/** What one render asks: the Liquid sources (cached in the thread by `key`) and the variables. */
export interface RenderJob {
  key: string;
  content: Content;
  variables: Record<string, unknown>;
}

/** A job as posted to a thread. */
export interface ThreadJob extends RenderJob {
  id: number;
  /** Liquid's own cut-off, from when the thread takes the job: before the pool's deadline. */
  cutAfterMs: number;
}

/** The share of the deadline Liquid gets before it stops itself (the rest covers messaging). */
const COOPERATIVE_SHARE = 0.75;

/** How a render ended: the content, or why not (`limit`: past its time, output size or range bound). */
export type RenderOutcome =
  | { ok: true; content: Content }
  | { ok: false; limit: boolean; message: string; field?: string };

/** Worker threads that render Liquid off the event loop, each job within a hard deadline. */
export interface RenderPool {
  /** Renders `job` for a notification of priority `rank` (0 CRITICAL .. 3 LOW). */
  run(job: RenderJob, rank: Rank): Promise<RenderOutcome>;
  close(): Promise<void>;
}

export interface RenderPoolOptions {
  threads: number;
  /** A job's deadline from the moment a thread takes it; past it the thread is terminated. */
  timeoutMs: number;
}

interface Waiting {
  job: RenderJob;
  rank: Rank;
  resolve(outcome: RenderOutcome): void;
}

interface Thread {
  worker: Worker;
  ready: boolean;
  running?: Waiting & { id: number; timer: NodeJS.Timeout };
}

const ENTRY = new URL('./render-thread.js', import.meta.url);

/**
 * Rendering runs in worker threads, never on the event loop that serves requests and runs the
 * scheduler. Each job has a hard deadline: a thread still busy when it passes is terminated
 * (a tight loop inside one Liquid node would not listen) and replaced, and the job fails as a
 * render limit. Liquid is also told to stop a little earlier (COOPERATIVE_SHARE), which it checks
 * between nodes: most long renders end so, and their thread is kept. Threads take one job at a time, most urgent first, and LOW and
 * NORMAL never hold the threads reserved for CRITICAL and HIGH (dispatch/reserve.ts), so a
 * tenant's heavy templates never delay another's urgent render. Threads start on first use
 * and do not keep the process alive.
 */
export function createRenderPool(options: RenderPoolOptions): RenderPool {
  const caps = reserveCaps(options.threads);
  const used: [number, number, number, number] = [0, 0, 0, 0];
  const queues: Waiting[][] = [[], [], [], []];
  const threads: Thread[] = [];
  let nextId = 1;
  let closed = false;

  function spawn(): Thread {
    const worker = new Worker(ENTRY, {
      // A template that allocates past this ends its thread; the job fails as a render limit.
      resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32 },
    });
    const thread: Thread = { worker, ready: false };
    worker.on('message', (message: 'ready' | { id: number; outcome: RenderOutcome }) => {
      if (message === 'ready') {
        thread.ready = true;
      } else if (thread.running?.id === message.id) {
        finish(thread, message.outcome);
      }
      pump();
    });
    worker.on('error', () => {}); // an out-of-memory end: 'exit' follows and handles it
    worker.on('exit', () => {
      const index = threads.indexOf(thread);
      if (index >= 0) threads.splice(index, 1);
      if (thread.running) {
        finish(
          thread,
          closed
            ? { ok: false, limit: false, message: 'the render pool is closed' }
            : { ok: false, limit: true, message: 'rendering went over its memory limit' },
        );
      }
      if (!closed) pump();
    });
    threads.push(thread);
    return thread;
  }

  function finish(thread: Thread, outcome: RenderOutcome): void {
    const running = thread.running;
    if (!running) return;
    thread.running = undefined;
    clearTimeout(running.timer);
    used[running.rank] = (used[running.rank] ?? 1) - 1;
    running.resolve(outcome);
    holdProcess();
  }

  function start(thread: Thread, waiting: Waiting): void {
    const id = nextId++;
    used[waiting.rank] = (used[waiting.rank] ?? 0) + 1;
    const timer = setTimeout(() => {
      // Past the deadline: end the thread (the only way to stop a tight loop) and start another.
      const outcome: RenderOutcome = {
        ok: false,
        limit: true,
        message: `rendering ran out of time (${options.timeoutMs} ms)`,
      };
      finish(thread, outcome);
      const index = threads.indexOf(thread);
      if (index >= 0) threads.splice(index, 1);
      void thread.worker.terminate();
      pump();
    }, options.timeoutMs);
    thread.running = { ...waiting, id, timer };
    const cutAfterMs = options.timeoutMs * COOPERATIVE_SHARE;
    thread.worker.postMessage({ id, cutAfterMs, ...waiting.job } satisfies ThreadJob);
  }

  const running = () => threads.filter((t) => t.running).length;

  /** Threads keep the process alive only while there is work for them (idle ones do not). */
  function holdProcess(): void {
    const busy = queues.some((q) => q.length > 0) || threads.some((t) => t.running);
    for (const thread of threads) {
      if (busy) thread.worker.ref();
      else thread.worker.unref();
    }
  }

  function pump(): void {
    if (closed) return;
    drain();
    holdProcess();
  }

  function drain(): void {
    // One thread more than may run at once: a warm spare takes over from a terminated one
    // without waiting for a new thread to load (about 200 ms).
    while (threads.length < options.threads + 1) spawn();
    for (let rank = 0; rank < queues.length; rank++) {
      const queue = queues[rank] as Waiting[];
      while (queue.length > 0 && roomFor(rank, used, caps) > 0 && running() < options.threads) {
        const free = threads.find((t) => t.ready && !t.running);
        if (!free) return;
        start(free, queue.shift() as Waiting);
      }
    }
  }

  return {
    run(job, rank) {
      if (closed) return Promise.resolve({ ok: false, limit: false, message: 'the render pool is closed' });
      return new Promise((resolve) => {
        (queues[rank] ?? (queues[3] as Waiting[])).push({ job, rank, resolve });
        pump();
      });
    },
    async close() {
      closed = true;
      for (const queue of queues) {
        for (const waiting of queue.splice(0)) {
          waiting.resolve({ ok: false, limit: false, message: 'the render pool is closed' });
        }
      }
      await Promise.all(threads.splice(0).map((t) => t.worker.terminate()));
    },
  };
}
