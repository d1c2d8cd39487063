// A callback attempt's outcome (API.md §10): 2xx delivered; 410 and a refused URL given up at
// once; anything else retried with the backoff deliveries use (dispatch/backoff.ts, base 1 s, cap
// 2 h, full jitter) until 24 h after the change.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CALLBACK_RETRY_WINDOW_MS, createAttempt, outcomeOf } from '../../src/callbacks/attempt.ts';
import type { CallbackRecord, LeasedMessage } from '../../src/store/port/callbacks.ts';

const NOW = Date.UTC(2026, 10, 28, 12);
const HOUR = 60 * 60 * 1000;
const answered = (statusCode: number | null) => ({
  statusCode,
  error: statusCode === null ? 'no answer' : null,
});
/** The delay of the retry after attempt `attempt` of a message made `age` ago, drawing `draw`. */
const delayAfter = (attempt: number, draw: number, age = 0) => {
  const outcome = outcomeOf(answered(503), { attempt, createdAt: NOW - age }, NOW, () => draw);
  assert.equal(outcome.kind, 'retry');
  return outcome.kind === 'retry' ? outcome.retryAt - NOW : -1;
};

describe('callback attempt outcome', () => {
  it('delivers on 2xx and gives up on 410 and on a refused URL, without a retry', () => {
    const message = { attempt: 1, createdAt: NOW };
    assert.deepEqual(outcomeOf(answered(204), message, NOW), { kind: 'delivered' });
    assert.deepEqual(outcomeOf(answered(410), message, NOW), { kind: 'failed' });
    assert.deepEqual(
      outcomeOf({ statusCode: null, error: 'callback URL refused', refused: true }, message, NOW),
      { kind: 'failed' },
    );
  });

  it('retries anything else with backoff from 1 s, doubling, at most 2 h apart, jittered from 0', () => {
    const top = 1 - 2 ** -40;
    assert.deepEqual(
      [1, 2, 3, 8, 13, 14, 40].map((attempt) => delayAfter(attempt, top)),
      [999, 1_999, 3_999, 127_999, 4_095_999, 2 * HOUR - 1, 2 * HOUR - 1],
    );
    assert.equal(delayAfter(5, 0), 0, 'full jitter: any delay up to the ceiling');
    assert.equal(delayAfter(5, 0.5), 8_000);
    const timedOut = outcomeOf(answered(null), { attempt: 1, createdAt: NOW }, NOW, () => 0.5);
    assert.deepEqual(timedOut, { kind: 'retry', retryAt: NOW + 500 });
    assert.deepEqual(
      outcomeOf(answered(302), { attempt: 2, createdAt: NOW }, NOW, () => 0.5),
      {
        kind: 'retry',
        retryAt: NOW + 1_000,
      },
    );
  });

  it('gives a message up once 24 h have passed since its change, and not before', () => {
    assert.equal(delayAfter(30, 0.5, CALLBACK_RETRY_WINDOW_MS - 1), HOUR);
    const late = outcomeOf(answered(503), { attempt: 30, createdAt: NOW - CALLBACK_RETRY_WINDOW_MS }, NOW);
    assert.deepEqual(late, { kind: 'failed' });
    assert.equal(CALLBACK_RETRY_WINDOW_MS, 24 * HOUR);
  });
});

describe('callback attempt', () => {
  it('fails, with why, and is retried when its secret cannot be opened, without calling the receiver', async () => {
    let posted = 0;
    const poster = {
      post: async () => {
        posted++;
        return { statusCode: 204, error: null };
      },
    };
    // A secret sealed with a key-encryption secret this process does not have.
    const attempt = createAttempt(poster, { now: () => NOW }, undefined);
    const callback = {
      id: 'cb_1',
      url: 'https://receiver.test/hook',
      secret: 'enc:v1:a:b:c:d',
    } as CallbackRecord;
    const message = { id: 'msg_1', attempt: 1, createdAt: NOW, body: '{}' } as LeasedMessage;
    const finished = await attempt(callback, message);
    assert.equal(posted, 0);
    assert.equal(finished.outcome.kind, 'retry');
    assert.match(finished.error ?? '', /secret cannot be opened/);
  });
});
