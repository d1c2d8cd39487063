// Taken from ../shared/peer-bench/peer-pg/ (the PostgreSQL peer), changed only to say when it is ready.
// The PostgreSQL peer's worker: a graphile-worker runner (run()) whose one task "delivers" each
// job to a null provider (it returns a message id at once); the job is done when the task
// resolves, and graphile-worker deletes it. It is configured as graphile-worker's performance
// guide suggests for a high-throughput queue: a local queue of concurrency + 1 jobs, and job
// completions batched over 250 ms (PGPEER_LOCAL_QUEUE: -1 turns the local queue off;
// PGPEER_COMPLETE_BATCH_MS: -1 completes each job on its own). Drain rate, as the BullMQ peer's:
//   PEER_DRAIN_MODE=none      as fast as it can (concurrency PEER_CONCURRENCY, default 50)
//   PEER_DRAIN_MODE=limiter   at most PEER_DRAIN_RATE provider calls a second, in windows of
//                             PEER_DRAIN_WINDOW_MS; graphile-worker has no rate limiter, so this
//                             is the usual one written in the task (concurrency default 50)
//   PEER_DRAIN_MODE=latency   the provider call takes a fixed time, sized so that
//                             PEER_CONCURRENCY calls in flight (default 10) give PEER_DRAIN_RATE/s
// For every CRITICAL job it appends one line to PEER_CALL_LOG: when the provider was called, next
// to the job's created_at (when add_job ran), so the bench can measure acceptance -> provider call.
import { appendFileSync } from 'node:fs';
import { run } from 'graphile-worker';
import { makeLogger, TASK } from './jobs.mjs';

const mode = process.env.PEER_DRAIN_MODE || 'none';
const rate = Number(process.env.PEER_DRAIN_RATE || 2000);
const windowMs = Number(process.env.PEER_DRAIN_WINDOW_MS || 100);
const concurrency = Number(process.env.PEER_CONCURRENCY || (mode === 'latency' ? 10 : 50));
const localQueue = Number(process.env.PGPEER_LOCAL_QUEUE || concurrency + 1);
const completeBatchMs = Number(process.env.PGPEER_COMPLETE_BATCH_MS ?? 250);
const callLog = process.env.PEER_CALL_LOG;
const callMs = mode === 'latency' ? (1000 * concurrency) / rate : 0;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** At most `max` calls per window of `ms`; a call past that waits for the next window. */
function windowLimiter(max, ms) {
  let start = 0;
  let used = 0;
  return async function take() {
    for (;;) {
      const now = Date.now();
      if (now - start >= ms) {
        start = now;
        used = 0;
      }
      if (used < max) {
        used += 1;
        return;
      }
      await sleep(start + ms - now);
    }
  };
}
const limiter =
  mode === 'limiter' ? windowLimiter(Math.max(1, Math.round((rate * windowMs) / 1000)), windowMs) : null;

let sent = 0;
const nullProvider = {
  async send(payload, job, startedAt) {
    if (limiter) await limiter();
    const calledAt = Date.now(); // the same clock as created_at (PostgreSQL's now(), same host)
    if (callLog && payload.priority === 'CRITICAL') {
      const acceptedAt = new Date(job.created_at).getTime();
      appendFileSync(
        callLog,
        `${JSON.stringify({ id: String(job.id), calledAt, acceptedAt, processedOn: startedAt })}\n`,
      );
    }
    if (callMs) await sleep(callMs);
    sent += 1;
    return { providerMessageId: `null-${job.id}` };
  },
};

const runner = await run({
  connectionString: process.env.DATABASE_URL,
  concurrency,
  noHandleSignals: true,
  logger: makeLogger(),
  parsedCronItems: [],
  taskList: {
    [TASK]: async (payload, helpers) => {
      await nullProvider.send(payload, helpers.job, Date.now());
    },
  },
  preset: {
    worker: {
      localQueue: { size: localQueue },
      completeJobBatchDelay: completeBatchMs,
      failJobBatchDelay: completeBatchMs,
    },
  },
});

console.log('PEER WORKER ready');

process.on('SIGTERM', async () => {
  await runner.stop();
  process.stderr.write(`worker: ${sent} sent\n`);
  process.exit(0);
});
