import { Worker } from 'node:worker_threads';
import { HeraldError } from '../errors.ts';
import type { DecodedRecipientBatch } from '../recipients/batch-body.ts';
import type { DecodedBatch } from './batch-body.ts';
import { type BatchKind, BatchQueue } from './batch-queue.ts';

/** What a batch thread is told at its start (batch-thread.ts). */
export interface BatchThreadData {
  nice: number;
  /** Tests only: see BatchDecoderOptions.hold and holdKind. */
  hold?: Int32Array;
  holdKind?: BatchKind;
}

/**
 * A body for a batch thread: its bytes (moved, not copied) and what reading it needs. A
 * notification batch: acceptance's time and push rule, and its tenant's recipient digest key
 * (recipient-digest.ts; the thread never holds the server key). A recipients batch: the push rule.
 */
export type BatchBody =
  | {
      kind: 'notifications';
      bytes: Uint8Array;
      now: number;
      pushAllowedHosts: readonly string[];
      digestKey: Uint8Array;
    }
  | { kind: 'recipients'; bytes: Uint8Array; pushAllowedHosts: readonly string[] };

export type ToBatchThread = BatchBody & { id: number };

/** How a body was read: as its kind reads (batch-body.ts, recipients/batch-body.ts). */
export type Decoded = DecodedBatch | DecodedRecipientBatch;

/** What a batch thread says: it is ready, or how a body was read. */
export type FromBatchThread =
  | { ready: true }
  | { id: number; ok: true; decoded: Decoded }
  | { id: number; ok: false; message: string };

/**
 * Reads and checks batch bodies off the event loop: POST /notifications/batch (routes.ts) and
 * POST /recipients/batch (recipients/batch-route.ts).
 */
export interface BatchDecoder {
  /**
   * Reads `bytes` as a batch body and checks each item at `now`; before any recipients batch, in
   * turns by tenant with other tenants' batches (batch-queue.ts). It takes the view's whole
   * buffer (moved to the thread, not copied): the caller must own it alone, and not use it
   * after. `digestKey` is the tenant's recipient digest key.
   */
  decode(
    tenant: string,
    bytes: Uint8Array,
    now: number,
    pushAllowedHosts: readonly string[],
    digestKey: Uint8Array,
  ): Promise<DecodedBatch>;
  /**
   * Reads `bytes` as a recipients batch body and checks each item; `bytes` as for `decode`. After
   * every notification batch, in turns by tenant, in all threads but one (batch-queue.ts).
   */
  decodeRecipients(
    tenant: string,
    bytes: Uint8Array,
    pushAllowedHosts: readonly string[],
  ): Promise<DecodedRecipientBatch>;
  close(): Promise<void>;
}

export interface BatchDecoderOptions {
  threads: number;
  /**
   * Tests only: a shared [held, arrived] pair. While `held` (index 0) is 1, each thread adds one
   * to `arrived` (index 1) when a body reaches it and waits before reading it, so a test can
   * see what the event loop does while a batch is being read.
   */
  hold?: Int32Array;
  /** Tests only: hold the bodies of this kind only (the others are read at once); both if unset. */
  holdKind?: BatchKind;
}

const ENTRY = new URL('./batch-thread.js', import.meta.url);
/** The nice value of the threads (as the render pool's bulk threads): requests' event loop first. */
const BATCH_NICE = 10;

interface Job {
  message: BatchBody;
  resolve(decoded: Decoded): void;
  reject(error: unknown): void;
}

interface Thread {
  worker: Worker;
  ready: boolean;
  running?: { id: number; job: Job };
}

/** The answer when a batch thread ended under a body (it ran out of memory): the caller may retry. */
const ended = () =>
  new HeraldError('UNAVAILABLE', 'The batch could not be read now; retry it.', { retryAfterS: 1 });

/**
 * Batch bodies are read and checked in worker threads: JSON parsing, each item's validation and
 * the serialization of its row are about a hundred milliseconds of CPU for a 7 MiB batch, which
 * held the event loop (GET /health, every other tenant's requests) while it ran (issue 46,
 * item 1). The body's bytes move to the thread without a copy; what comes back is each item's
 * verdict with its row's JSON columns as strings, flat objects that are cheap to receive. Waiting
 * bodies take turns by tenant, as renders do; notification batches go before recipients imports,
 * which never hold the last thread (batch-queue.ts, issue 50). Threads start on first use and do
 * not keep the process alive; one that ends (out of memory) fails its body with 503 and is
 * replaced on next use.
 */
export function createBatchDecoder(options: BatchDecoderOptions): BatchDecoder {
  const waiting = new BatchQueue<Job>(options.threads);
  const threads: Thread[] = [];
  let nextId = 1;
  let closed = false;

  function spawn(): Thread {
    const worker = new Worker(ENTRY, {
      workerData: {
        nice: BATCH_NICE,
        hold: options.hold,
        holdKind: options.holdKind,
      } satisfies BatchThreadData,
    });
    const thread: Thread = { worker, ready: false };
    worker.on('message', (message: FromBatchThread) => {
      if ('ready' in message) {
        thread.ready = true;
      } else if (thread.running?.id === message.id) {
        const { job } = thread.running;
        thread.running = undefined;
        if (message.ok) job.resolve(message.decoded);
        else job.reject(new Error(`batch thread: ${message.message}`));
      }
      pump();
    });
    worker.on('error', () => {}); // 'exit' follows and handles it
    worker.on('exit', () => {
      threads.splice(threads.indexOf(thread), 1);
      thread.running?.job.reject(ended());
      thread.running = undefined;
      // A thread that ended before it was ready would end again: fail the waiting bodies
      // rather than start threads in a loop; the next body tries a new one.
      if (!thread.ready) for (const job of waiting.takeAll()) job.reject(ended());
      pump();
    });
    threads.push(thread);
    return thread;
  }

  /** A thread keeps the process alive while a body is in it or waiting for it, not when idle. */
  function holdProcess(): void {
    for (const t of threads) {
      if (t.running || waiting.size > 0) t.worker.ref();
      else t.worker.unref();
    }
  }

  function pump(): void {
    try {
      take();
    } finally {
      holdProcess();
    }
  }

  function take(): void {
    while (waiting.size > 0 && !closed) {
      const idle = threads.find((t) => t.ready && !t.running);
      if (!idle) {
        if (threads.length < options.threads) spawn();
        return;
      }
      const imports = threads.filter((t) => t.running?.job.message.kind === 'recipients').length;
      const job = waiting.next(imports);
      if (!job) return; // only imports wait, and they hold their share of the threads
      const id = nextId++;
      idle.running = { id, job };
      const message: ToBatchThread = { id, ...job.message };
      idle.worker.postMessage(message, [message.bytes.buffer as ArrayBuffer]);
    }
  }

  /** Queues a body for a thread (batch-queue.ts); resolves with how it was read. */
  function submit(tenant: string, body: BatchBody): Promise<Decoded> {
    if (closed) return Promise.reject(ended());
    // The view's whole buffer moves to the thread. Node allocates small buffers from a shared
    // pool, which cannot move: those are copied (a few kilobytes at most).
    const { bytes } = body;
    const own =
      bytes.buffer instanceof ArrayBuffer && bytes.byteLength >= Buffer.poolSize >>> 1
        ? bytes
        : new Uint8Array(bytes);
    return new Promise((resolve, reject) => {
      waiting.push(body.kind, tenant, { message: { ...body, bytes: own }, resolve, reject });
      pump();
    });
  }

  return {
    decode(tenant, bytes, now, pushAllowedHosts, digestKey) {
      return submit(tenant, {
        kind: 'notifications',
        bytes,
        now,
        pushAllowedHosts,
        digestKey,
      }) as Promise<DecodedBatch>;
    },
    decodeRecipients(tenant, bytes, pushAllowedHosts) {
      return submit(tenant, {
        kind: 'recipients',
        bytes,
        pushAllowedHosts,
      }) as Promise<DecodedRecipientBatch>;
    },
    async close() {
      closed = true;
      for (const job of waiting.takeAll()) job.reject(ended());
      await Promise.all(threads.map((t) => t.worker.terminate()));
    },
  };
}
