import { appendFile } from 'node:fs/promises';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

/**
 * The stages of a CRITICAL's way through one worker, in order (HERALD_DISPATCH_TRACE): it is
 * accepted (its createdAt, taken by the API before its commit), the first urgent wake-up after
 * that reaches the worker (PostgreSQL: the ingest's NOTIFY), its claim cycle begins (the
 * PROCESSING event's time) and commits, the send is handed to deliver, the
 * render and the provider call run, the completion is queued for a cycle, that cycle begins (the
 * SENT or DELIVERED event's time) and commits.
 */
export const STAGES = [
  'accepted',
  'hinted',
  'claimStart',
  'claimCommitted',
  'handed',
  'renderStart',
  'renderEnd',
  'sendStart',
  'sendEnd',
  'queued',
  'writeStart',
  'committed',
] as const;
export type Stage = (typeof STAGES)[number];

/** Which cycle claimed or wrote it: the urgent lane's, or a step's. */
export type Via = 'lane' | 'step';

export interface UrgentTrace {
  /** Marks `stage` of notification `seq` now (or at `at`, ms since the epoch, fractional). */
  mark(seq: number, stage: Stage, at?: number): void;
  /** Says an urgent wake-up reached the worker now (marked as `hinted` of the CRITICALs accepted before it). */
  hinted(): void;
  /** Says which cycle claimed (`claimStart`) or wrote (`writeStart`) it. */
  via(seq: number, stage: 'claimStart' | 'writeStart', via: Via): void;
  /** Writes what is left and stops the event-loop monitor. */
  close(): Promise<void>;
}

interface Entry {
  seq: number;
  at: Partial<Record<Stage, number>>;
  via: Partial<Record<'claim' | 'write', Via>>;
}

/** Now in ms since the epoch, with the monotonic clock's fraction (the stages are ms apart). */
export const preciseNow = (): number => performance.timeOrigin + performance.now();

/**
 * A trace of the CRITICALs one worker sends, for finding where their time goes (the bench script
 * bench/urgent-trace.ts reads it). Off unless HERALD_DISPATCH_TRACE names a file: one JSON line
 * per CRITICAL once its completion commits, and a line of the dispatch thread's event-loop delay
 * each second (how long a ready callback waited for the loop). Written a second at a time, off
 * the path it measures.
 */
export function createUrgentTrace(file: string): UrgentTrace {
  const open = new Map<number, Entry>();
  let lines: string[] = [];
  /** The latest urgent wake-ups' times, oldest first: a claimed CRITICAL takes the first after its acceptance. */
  const hints: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const entry = (seq: number): Entry => {
    let e = open.get(seq);
    if (!e) {
      e = { seq, at: {}, via: {} };
      open.set(seq, e);
    }
    return e;
  };
  const flush = async () => {
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    lines.push(
      JSON.stringify({
        loop: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) },
        t: Date.now(),
      }),
    );
    loop.reset();
    const out = lines;
    lines = [];
    await appendFile(file, `${out.join('\n')}\n`);
  };
  let writing = Promise.resolve();
  const timer = setInterval(() => {
    writing = writing.then(flush).catch(() => undefined);
  }, 1000);
  timer.unref();
  return {
    mark(seq, stage, at = preciseNow()) {
      // Only CRITICALs are traced: their claim opens the entry, other seqs are not looked at.
      const e = stage === 'claimStart' ? entry(seq) : open.get(seq);
      if (!e) return;
      e.at[stage] = at;
      if (stage === 'accepted') {
        const hint = hints.find((h) => h >= at);
        if (hint !== undefined) e.at.hinted = hint;
      }
      if (stage === 'committed') {
        open.delete(seq);
        lines.push(JSON.stringify(e));
      }
    },
    hinted() {
      hints.push(preciseNow());
      if (hints.length > 64) hints.shift();
    },
    via(seq, stage, via) {
      const e = stage === 'claimStart' ? entry(seq) : open.get(seq);
      if (e) e.via[stage === 'claimStart' ? 'claim' : 'write'] = via;
    },
    async close() {
      clearInterval(timer);
      loop.disable();
      await writing;
      await flush().catch(() => undefined);
    },
  };
}
