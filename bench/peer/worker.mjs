// Taken from ../shared/peer-bench/peer/ (the peer), changed only to say when it is ready.
// The peer's worker: a BullMQ Worker that "delivers" each job to a null provider (it returns a
// message id at once) and marks the job done. Its drain rate is set by the bench:
//   PEER_DRAIN_MODE=none      as fast as it can (concurrency PEER_CONCURRENCY)
//   PEER_DRAIN_MODE=limiter   BullMQ's rate limiter, PEER_DRAIN_RATE jobs/s in windows of
//                             PEER_DRAIN_WINDOW_MS (the usual way to respect a provider's rate)
//   PEER_DRAIN_MODE=latency   the provider call takes a fixed time, sized so that
//                             PEER_CONCURRENCY calls in flight give PEER_DRAIN_RATE jobs/s
// For every CRITICAL job it appends one line to PEER_CALL_LOG: when the provider was called,
// next to the job's acceptance timestamp, so the bench can measure acceptance -> provider call.
import { appendFileSync } from 'node:fs';
import { Worker } from 'bullmq';
import { QUEUE, redisConnection } from './queue.mjs';

const mode = process.env.PEER_DRAIN_MODE || 'none';
const rate = Number(process.env.PEER_DRAIN_RATE || 2000);
const windowMs = Number(process.env.PEER_DRAIN_WINDOW_MS || 100);
const concurrency = Number(process.env.PEER_CONCURRENCY || (mode === 'latency' ? 10 : 50));
const callLog = process.env.PEER_CALL_LOG;
const callMs = mode === 'latency' ? (1000 * concurrency) / rate : 0;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let sent = 0;
const nullProvider = {
  async send(job) {
    const calledAt = Date.now(); // the same clock as job.timestamp and job.processedOn
    if (callLog && job.data.priority === 'CRITICAL') {
      appendFileSync(callLog, `${JSON.stringify({ id: job.id, calledAt, acceptedAt: job.timestamp, processedOn: job.processedOn })}\n`);
    }
    if (callMs) await sleep(callMs);
    sent += 1;
    return { providerMessageId: `null-${job.id}` };
  },
};

const worker = new Worker(QUEUE, (job) => nullProvider.send(job), {
  connection: redisConnection(),
  concurrency,
  ...(mode === 'limiter' ? { limiter: { max: Math.max(1, Math.round((rate * windowMs) / 1000)), duration: windowMs } } : {}),
});
worker.on('ready', () => console.log('PEER WORKER ready'));
worker.on('error', (err) => process.stderr.write(`worker error: ${err.message}\n`));

process.on('SIGTERM', async () => {
  await worker.close();
  process.stderr.write(`worker: ${sent} sent\n`);
  process.exit(0);
});
