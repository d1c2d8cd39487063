import { Worker } from 'node:worker_threads';
import type { Content } from '../channels.ts';
import { type ThreadCpu, threadCpu } from '../os-thread.ts';
import { type Rank, reserveCaps, roomFor } from '../reserve.ts';
import { type Line, openLine } from '../thread-calls.ts';
import { Turns } from '../turns.ts';
import type { LiquidSource } from './fields.ts';

/** What one render asks: the Liquid sources (cached in the thread by `key`) and the variables. */
export interface RenderJob {
  /** Whose render it is: the waiting jobs of one priority take turns by tenant. */
  tenant: string;
  key: string;
  content: Content;
  variables: Record<string, unknown>;
  /**
   * Only parse this source (the syntax check, syntax-check.ts), in place of `content`: nothing is
   * rendered, nor cached.
   */
  check?: LiquidSource;
}

/** A job as handed to a thread (whose it is matters only to the queue). */
export interface ThreadJob extends Omit<RenderJob, 'tenant'> {
  /**
   * Liquid's own cut-off, before the pool's deadline, counted like it from when the job is posted
   * (a thread that takes it late has less time, not more), as `performance.timeOrigin +
   * performance.now()`: each thread's performance.now() counts from its own time origin.
   */
  cutAt: number;
  /** The CPU time Liquid's cut-off stands for: a render cut before its thread had it goes on (renderParsed). */
  cpuMs: number;
}

/** The share of the deadline Liquid gets before it stops itself (the rest covers messaging). */
const COOPERATIVE_SHARE = 0.75;
/**
 * However little CPU a job's thread got, it is terminated once the job has waited this many
 * times its deadline.
 */
const WAIT_LIMIT = 10;
/** The least time between two looks at a thread kept off the CPU past its deadline. */
const RECHECK_MS = 2;

/** What a render thread serves (render-jobs.ts), over the one thread-call mechanism (thread-calls.ts). */
export interface RenderThreadCalls {
  /** Renders (or, given `check`, parses) one job; answers every job, a failed one with why. */
  render(job: ThreadJob): RenderOutcome;
}

/** What the pool serves its threads. */
export interface RenderPoolCalls {
  /** The thread has warmed up and takes jobs; `tid` is its id in the OS, where there is one. */
  ready(tid: number | undefined): void;
}

/**
 * How a render ended: the content, or why not (`limit`: past its time, output size or range
 * bound; `busy`: its thread never had its time on a CPU, so nothing is known of the job, which
 * may be tried again).
 */
export type RenderOutcome =
  | { ok: true; content: Content }
  | { ok: false; limit: boolean; message: string; field?: string; busy?: true };

/** Worker threads that render Liquid off the event loop, each job within a hard deadline. */
export interface RenderPool {
  /** Renders `job` for a notification of priority `rank` (0 CRITICAL .. 3 LOW). */
  run(job: RenderJob, rank: Rank): Promise<RenderOutcome>;
  close(): Promise<void>;
}

export interface RenderPoolOptions {
  threads: number;
  /**
   * A job's time from the moment it is posted to a thread; a thread still rendering it once it
   * has had that much CPU (or waited WAIT_LIMIT times as long) is terminated.
   */
  timeoutMs: number;
  /** Opens a thread's CPU clock from its OS id (tests pass their own); threadCpu by default. */
  cpuClock?: (tid: number | undefined) => ThreadCpu | undefined;
}

interface Waiting {
  job: RenderJob;
  rank: Rank;
  resolve(outcome: RenderOutcome): void;
}

interface Thread {
  worker: Worker;
  line: Line<RenderThreadCalls>;
  /** Kept for CRITICAL and HIGH, at the process's priority; the others run at BULK_NICE. */
  urgent: boolean;
  ready: boolean;
  /** The thread's CPU clock (Linux); without one its deadline is wall-clock time. */
  cpu?: ThreadCpu;
  running?: Waiting & { id: number; timer: NodeJS.Timeout; postedAt: number; cpuAtPost?: number };
}

const ENTRY = new URL('./render-thread.js', import.meta.url);

/**
 * The nice value of the threads that render for NORMAL and LOW (and for CRITICAL and HIGH when
 * theirs are busy): when the cores are busy, the event loops and urgent renders get the CPU first.
 */
const BULK_NICE = 10;

/** What a render thread is told at its start (render-thread.ts). */
export interface RenderThreadData {
  nice: number;
}

/**
 * Rendering runs in worker threads, never on the event loop that serves requests and runs the
 * scheduler. Each job has a hard deadline: a thread still busy once the job has had its time on
 * a CPU is terminated (a tight loop inside one Liquid node would not listen) and replaced, and
 * the job fails as a render limit (see overtime()). Liquid is also told to stop a little earlier
 * (COOPERATIVE_SHARE), which it checks between nodes: most long renders end so, and their thread
 * is kept. Threads take one job at a time, most urgent first, and LOW and NORMAL never hold the
 * threads reserved for CRITICAL and HIGH (src/reserve.ts), so a tenant's heavy templates
 * never delay another's urgent render; within a priority, tenants take turns. The reserved
 * threads also keep the process's CPU priority while the others step back to BULK_NICE: a
 * CRITICAL render on a thread as nice as the runaway renders beside it waited for the CPU behind
 * them, past its own deadline at times (issue 46, item 10). Threads start on first use and do not
 * keep the process alive.
 */
export function createRenderPool(options: RenderPoolOptions): RenderPool {
  const caps = reserveCaps(options.threads);
  // The threads kept for CRITICAL and HIGH (none with a single thread, which serves everything).
  const urgentThreads = caps.total - caps.bulk;
  const used: [number, number, number, number] = [0, 0, 0, 0];
  // Per priority, the tenants' jobs in turns: one tenant's backlog of heavy templates delays
  // another tenant's render of the same priority by at most one job, not by the whole backlog.
  const queues = [new Turns<Waiting>(), new Turns<Waiting>(), new Turns<Waiting>(), new Turns<Waiting>()];
  const threads: Thread[] = [];
  let nextId = 1;
  let closed = false;

  function spawn(urgent: boolean): Thread {
    const worker = new Worker(ENTRY, {
      workerData: { nice: urgent ? 0 : BULK_NICE } satisfies RenderThreadData,
      // A template that allocates past this ends its thread; the job fails as a render limit.
      resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32 },
    });
    const line = openLine<RenderThreadCalls, RenderPoolCalls>(worker, {
      ready(tid) {
        thread.ready = true;
        thread.cpu = (options.cpuClock ?? threadCpu)(tid);
        pump();
      },
    });
    const thread: Thread = { worker, line, urgent, ready: false };
    worker.on('error', () => {}); // an out-of-memory end: 'exit' follows and handles it
    worker.on('exit', () => {
      thread.cpu?.close();
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
      // After the job's own outcome above: the line's waiting call is failed, and ignored.
      line.end(new Error('the render thread ended'));
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
    const timer = setTimeout(() => overtime(thread, id), options.timeoutMs);
    const postedAt = performance.now();
    thread.running = { ...waiting, id, timer, postedAt, cpuAtPost: thread.cpu?.ms() };
    const cpuMs = options.timeoutMs * COOPERATIVE_SHARE;
    const cutAt = performance.timeOrigin + postedAt + cpuMs;
    const { key, content, variables, check } = waiting.job;
    // Only the job still running on this thread is finished by its answer: one past its deadline
    // or on a thread that ended was finished already, and its late answer (or the line's failure)
    // changes nothing.
    const answered = (outcome: RenderOutcome) => {
      if (thread.running?.id !== id) return;
      finish(thread, outcome);
      pump();
    };
    thread.line.call('render', { cutAt, cpuMs, key, content, variables, check }).then(answered, (error) =>
      // The thread answers every job it is given (render-jobs.ts), so a failed call is one the
      // structured clone refused (variables nested thousands deep): it fails alone, and the
      // thread takes the next.
      answered({ ok: false, limit: false, message: `the job cannot be handed to a thread: ${error}` }),
    );
  }

  /**
   * Job `id` is past its deadline and its thread has not answered. A thread that has not had the
   * job's time on a CPU since it was posted was kept off it (the cores were busy, and render
   * threads run at nice 10): it is looked at again once it could have, and it usually answers
   * first, cut by Liquid. Terminating it instead would cost a new thread's start-up, a few tens
   * of milliseconds of CPU on cores that are already short, and under load more threads would
   * miss their deadline for it. A thread that has had its time (a tight loop Liquid cannot cut),
   * or whose job has waited WAIT_LIMIT deadlines, is ended (the only way to stop a tight loop)
   * and another started.
   */
  function overtime(thread: Thread, id: number): void {
    const running = thread.running;
    if (running?.id !== id) return;
    const now = thread.cpu?.ms();
    const had = now !== undefined && running.cpuAtPost !== undefined ? now - running.cpuAtPost : undefined;
    const waited = performance.now() - running.postedAt;
    const keptOff = had !== undefined && had < options.timeoutMs;
    if (keptOff && waited < options.timeoutMs * WAIT_LIMIT) {
      running.timer = setTimeout(() => overtime(thread, id), Math.max(RECHECK_MS, options.timeoutMs - had));
      return;
    }
    // A job whose thread was kept off the CPU the whole time says nothing of its template: it is
    // busy, not past a limit (the notification is retried, a check or preview answers 503).
    finish(
      thread,
      keptOff
        ? {
            ok: false,
            limit: false,
            busy: true,
            message: `rendering could not get a CPU within ${options.timeoutMs * WAIT_LIMIT} ms`,
          }
        : { ok: false, limit: true, message: `rendering ran out of time (${options.timeoutMs} ms)` },
    );
    const index = threads.indexOf(thread);
    if (index >= 0) threads.splice(index, 1);
    void thread.worker.terminate(); // its 'exit' closes its CPU clock
    pump();
  }

  const running = () => threads.filter((t) => t.running).length;

  /** Threads keep the process alive only while there is work for them (idle ones do not). */
  function holdProcess(): void {
    const busy = queues.some((q) => q.size > 0) || threads.some((t) => t.running);
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

  /** A ready thread for a job of `rank`: CRITICAL and HIGH take theirs first, then any; the others a bulk one. */
  function freeThread(rank: Rank): Thread | undefined {
    const idle = threads.filter((t) => t.ready && !t.running);
    return rank <= 1 ? (idle.find((t) => t.urgent) ?? idle[0]) : idle.find((t) => !t.urgent);
  }

  function drain(): void {
    // One bulk thread more than may run at once: a warm spare takes over from a terminated one
    // without waiting for a new thread to load (about 200 ms).
    const count = (urgent: boolean) => threads.filter((t) => t.urgent === urgent).length;
    while (count(true) < urgentThreads) spawn(true);
    while (count(false) < options.threads - urgentThreads + 1) spawn(false);
    for (let rank = 0; rank < queues.length; rank++) {
      const queue = queues[rank] as Turns<Waiting>;
      while (queue.size > 0 && roomFor(rank, used, caps) > 0 && running() < options.threads) {
        const free = freeThread(rank);
        if (!free) break;
        start(free, queue.shift() as Waiting);
      }
    }
  }

  return {
    run(job, rank) {
      if (closed) return Promise.resolve({ ok: false, limit: false, message: 'the render pool is closed' });
      return new Promise((resolve) => {
        (queues[rank] ?? (queues[3] as Turns<Waiting>)).push(job.tenant, { job, rank, resolve });
        pump();
      });
    },
    async close() {
      closed = true;
      for (const queue of queues) {
        for (const waiting of queue.takeAll()) {
          waiting.resolve({ ok: false, limit: false, message: 'the render pool is closed' });
        }
      }
      await Promise.all(threads.splice(0).map((t) => t.worker.terminate()));
    },
  };
}
