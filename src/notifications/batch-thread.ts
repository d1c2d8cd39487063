import { parentPort, workerData } from 'node:worker_threads';
import { lowerOwnPriority, nameOwnThread } from '../os-thread.ts';
import { decodeRecipientBatch } from '../recipients/batch-body.ts';
import { decodeBatch } from './batch-body.ts';
import type { BatchThreadData, FromBatchThread, ToBatchThread } from './batch-decoder.ts';

/**
 * The body of a batch thread: reads and checks one batch body at a time (batch-body.ts, or
 * recipients/batch-body.ts for a recipients batch) and
 * answers with the outcome. Batches are bulk work: on Linux the thread steps back to the nice
 * value it is given, so that when the cores are busy the event loop answering requests gets
 * the CPU first.
 */
const port = parentPort;
if (!port) throw new Error('batch-thread.ts runs in a batch thread (batch-decoder.ts)');
const { nice, hold, holdKind } = workerData as BatchThreadData;
nameOwnThread('herald-batch');
if (nice > 0) lowerOwnPriority(nice);

/** Reads one body as its kind reads. */
const decoded = (body: ToBatchThread) =>
  body.kind === 'recipients'
    ? decodeRecipientBatch(body.bytes, body.pushAllowedHosts)
    : decodeBatch(body.bytes, body.now, body.pushAllowedHosts, body.digestKey);

port.on('message', (body: ToBatchThread) => {
  const { id } = body;
  if (hold && (holdKind === undefined || holdKind === body.kind)) {
    // Tests only: say that a body is here, then wait until let go (batch-decoder.ts `hold`).
    Atomics.store(hold, 1, Atomics.load(hold, 1) + 1);
    Atomics.notify(hold, 1);
    Atomics.wait(hold, 0, 1);
  }
  let message: FromBatchThread;
  try {
    message = { id, ok: true, decoded: decoded(body) };
  } catch (error) {
    message = { id, ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(message);
});
port.postMessage({ ready: true } satisfies FromBatchThread);
