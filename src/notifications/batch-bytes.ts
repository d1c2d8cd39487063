import type { IncomingMessage } from 'node:http';
import { errorCodes } from 'fastify';

/**
 * The error Fastify's JSON parser answers for a body a batch thread found empty or not JSON
 * (batch-body.ts `parseBody`): the same 400s as any other route's body.
 */
export const malformedBody = (malformed: 'empty' | 'invalid') =>
  malformed === 'empty'
    ? new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY()
    : new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();

/** The first buffer of a body sent without Content-Length; doubled as it fills. */
const FIRST_SIZE = 256 * 1024;

/**
 * Reads a request body of at most `limit` bytes into one buffer of its own (movable to another
 * thread), copying each chunk as it arrives. Fastify's reader keeps the chunks and joins them at
 * the end: for a 7 MiB batch, one copy of megabytes (and the page faults of a new buffer) in one
 * turn of the event loop. Answers as Fastify's reader does: 413 past the limit, 400 when the body
 * and its Content-Length differ or the stream fails.
 */
export function readBytes(payload: IncomingMessage, limit: number): Promise<Uint8Array> {
  const declared = Number(payload.headers['content-length']);
  if (declared > limit) return Promise.reject(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
  let target = Buffer.from(new ArrayBuffer(Number.isNaN(declared) ? Math.min(FIRST_SIZE, limit) : declared));
  let received = 0;
  return new Promise((resolve, reject) => {
    const stop = () => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onEnd);
    };
    function onData(chunk: Buffer | string) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      if (received + bytes.length > limit) {
        stop();
        reject(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
        return;
      }
      if (received + bytes.length > target.length) {
        // More than declared (refused at the end) or no Content-Length: a larger buffer.
        const grown = Buffer.from(
          new ArrayBuffer(Math.min(limit, Math.max(target.length * 2, received + bytes.length))),
        );
        target.copy(grown, 0, 0, received);
        target = grown;
      }
      received += bytes.copy(target, received);
    }
    function onEnd(error?: Error & { statusCode?: number }) {
      stop();
      if (error) {
        if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400;
        reject(error);
      } else if (!Number.isNaN(declared) && received !== declared) {
        reject(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      } else {
        resolve(new Uint8Array(target.buffer, 0, received));
      }
    }
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onEnd);
    payload.resume();
  });
}
