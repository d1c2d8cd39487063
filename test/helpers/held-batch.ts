// An API whose batch threads hold each body (or each of one kind) until released (the proof that
// a batch body is read off the event loop: GET /health answers meanwhile; that imports leave a
// thread to notification batches), a count of the bodies given to the decoder, and a count of
// the event loop's JSON.parse calls on a batch body. Used by the notification and recipient
// batch tests.
import { manualClock } from '../../src/clock.ts';
import { buildApi, createDeps } from '../../src/main.ts';
import { type BatchDecoderOptions, createBatchDecoder } from '../../src/notifications/batch-decoder.ts';
import { testConfig } from './config.ts';

/**
 * `marker`: a text JSON.parse gets that holds it counts as a batch body parsed on the event loop.
 * `threads` (default 1) and `holdKind` (default both) as BatchDecoderOptions.
 */
export async function heldBatchApi(
  marker: string,
  options: Partial<Pick<BatchDecoderOptions, 'threads' | 'holdKind'>> = {},
) {
  // While hold[0] is 1, the batch thread waits with the body in hand (hold[1] counts arrivals).
  const hold = new Int32Array(new SharedArrayBuffer(8));
  Atomics.store(hold, 0, 1);
  const deps = await createDeps(testConfig({ HERALD_ROLES: 'auth,api' }), manualClock(Date.UTC(2026, 0, 1)));
  const decoder = createBatchDecoder({ threads: options.threads ?? 1, hold, holdKind: options.holdKind });
  // The real decoder, counting the bodies it is given (queued, whether or not a thread took them).
  const submitted = { notifications: 0, recipients: 0 };
  deps.batchDecoder = {
    decode(...args) {
      submitted.notifications += 1;
      return decoder.decode(...args);
    },
    decodeRecipients(...args) {
      submitted.recipients += 1;
      return decoder.decodeRecipients(...args);
    },
    close: () => decoder.close(),
  };
  const app = await buildApi(deps);
  const release = () => {
    Atomics.store(hold, 0, 0);
    Atomics.notify(hold, 0);
  };
  const parse = JSON.parse;
  let bodyParses = 0;
  JSON.parse = (text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => {
    if (typeof text === 'string' && text.includes(marker)) bodyParses += 1;
    return parse(text, reviver);
  };
  return {
    deps,
    app,
    release,
    /** Holds the next bodies again, the count of arrivals from zero. */
    hold() {
      Atomics.store(hold, 1, 0);
      Atomics.store(hold, 0, 1);
    },
    /** Bodies given to the decoder so far, by kind. */
    submitted: () => ({ ...submitted }),
    /** Bodies that reached the batch thread so far. */
    arrived: () => Atomics.load(hold, 1),
    bodyParses: () => bodyParses,
    async close() {
      JSON.parse = parse;
      release();
      await app.close();
      await deps.store.close();
    },
  };
}
