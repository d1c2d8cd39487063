import { Worker } from 'node:worker_threads';
import type { PostAnswer, Poster, PostRequest } from './post.ts';

/** Requests as posted to the thread, and answers as it posts them back: `[id, …]` pairs. */
export type PostBatch = Array<[number, PostRequest]>;
export type ReplyBatch = Array<[number, PostAnswer]>;

const ENTRY = new URL('./post-thread.js', import.meta.url);

/**
 * A Poster whose HTTPS requests run in a thread of their own: TLS, HTTP and signing never take
 * the event loop of the thread that claims and commits (the dispatch thread on SQLite). The
 * requests of one turn go over in one message, and come back so. A thread that ends (it should
 * not) fails what it held as request failures, retried like any other, and is started again on
 * the next request. The thread keeps the process alive only while it holds requests.
 */
export function createThreadedPoster(allowedHosts: readonly string[]): Poster & { warm(): void } {
  let worker: Worker | undefined;
  const waiting = new Map<number, (answer: PostAnswer) => void>();
  let outgoing: PostBatch = [];
  let nextId = 1;
  let closing = false;

  function thread(): Worker {
    if (worker) return worker;
    const started = new Worker(ENTRY, {
      workerData: { allowedHosts: [...allowedHosts] },
      resourceLimits: { maxYoungGenerationSizeMb: 8 },
    });
    started.on('message', (answers: ReplyBatch) => {
      for (const [id, answer] of answers) {
        waiting.get(id)?.(answer);
        waiting.delete(id);
      }
      if (waiting.size === 0) started.unref();
    });
    started.on('error', () => {}); // 'exit' follows and settles what it held
    started.on('exit', () => {
      worker = undefined;
      const error = closing ? 'the callback sender is closed' : 'the callback sender thread ended';
      for (const settle of waiting.values()) settle({ statusCode: null, error: `request failed: ${error}` });
      waiting.clear();
    });
    worker = started;
    return started;
  }

  function flush(): void {
    const batch = outgoing;
    outgoing = [];
    const target = thread();
    target.ref();
    target.postMessage(batch);
  }

  return {
    /**
     * Starts the thread ahead of the first request (the sender calls it once a callback exists):
     * loading it takes a few hundred milliseconds, which a message claimed meanwhile would wait
     * (or, after a crash, its lease). A Herald with no callbacks never starts it.
     */
    warm() {
      if (!worker && !closing) thread().unref();
    },
    post(request) {
      return new Promise<PostAnswer>((resolve) => {
        const id = nextId++;
        waiting.set(id, resolve);
        if (outgoing.length === 0) setImmediate(flush);
        outgoing.push([id, request]);
      });
    },
    async close() {
      closing = true;
      const ending = worker;
      if (!ending) return;
      const exited = new Promise((resolve) => ending.once('exit', resolve));
      ending.postMessage('close');
      await exited;
    },
  };
}
