import { parentPort, workerData } from 'node:worker_threads';
import { createPoster } from './post.ts';
import type { PostBatch, ReplyBatch } from './threaded-poster.ts';

/**
 * The body of the callback sender's HTTP thread (threaded-poster.ts has the other side): it
 * signs and sends each message it is given and answers with the receiver's status code. Answers
 * go back in batches, one message per turn of this thread's event loop.
 */
const port = parentPort;
if (!port) throw new Error('post-thread.ts runs as a worker thread');
const { allowedHosts } = workerData as { allowedHosts: string[] };
const poster = createPoster(allowedHosts);
let answers: ReplyBatch = [];

function answer(id: number, reply: ReplyBatch[number][1]): void {
  if (answers.length === 0) setImmediate(flush);
  answers.push([id, reply]);
}

function flush(): void {
  port?.postMessage(answers);
  answers = [];
}

port.on('message', (message: PostBatch | 'close') => {
  if (message === 'close') {
    void poster.close().then(() => port.close());
    return;
  }
  for (const [id, request] of message) void poster.post(request).then((reply) => answer(id, reply));
});
