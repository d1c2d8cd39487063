import { LRUCache } from 'lru-cache';
import { openPrivateKey } from '../auth/key-crypto.ts';
import type { Clock } from '../clock.ts';
import { backoff } from '../dispatch/backoff.ts';
import type {
  CallbackRecord,
  FinishedAttempt,
  LeasedMessage,
  MessageOutcome,
} from '../store/port/callbacks.ts';
import type { createPoster, PostAnswer } from './post.ts';

/** Messages are retried for this long after the status change, then given up (docs/callbacks.md). */
export const CALLBACK_RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
/**
 * The retries' backoff (dispatch/backoff.ts, the one schedule of Herald's retries): the first
 * within a second, doubling to at most two hours apart (docs/decisions/0102).
 */
const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 2 * 60 * 60 * 1000;
/** After a rotation the old secret still signs (a second signature) for this long. */
const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000;

/**
 * How an attempt ended, from the receiver's answer: 2xx delivered; 410 (the pass disables the
 * callback) and a URL the outbound rules refuse failed without a retry; anything else retried
 * with backoff, until 24 h after the change.
 */
export function outcomeOf(
  answer: PostAnswer,
  message: Pick<LeasedMessage, 'attempt' | 'createdAt'>,
  now: number,
  random: () => number = Math.random,
): MessageOutcome {
  const code = answer.statusCode;
  if (answer.refused || code === 410) return { kind: 'failed' };
  if (code !== null && code >= 200 && code < 300) return { kind: 'delivered' };
  if (now - message.createdAt >= CALLBACK_RETRY_WINDOW_MS) return { kind: 'failed' };
  return { kind: 'retry', retryAt: now + backoff(RETRY_BASE_MS, RETRY_MAX_MS, message.attempt, random) };
}

/**
 * Makes one attempt of a message: signed with the callback's secret, and its previous one for a
 * day after a rotation, each opened once (a burst signs thousands with the same few).
 */
export function createAttempt(
  poster: Pick<ReturnType<typeof createPoster>, 'post'>,
  clock: Clock,
  keyEncryptionSecret: string | undefined,
): (callback: CallbackRecord, message: LeasedMessage) => Promise<FinishedAttempt> {
  const opened = new LRUCache<string, string>({ max: 1000 });
  const open = (sealed: string, id: string) => {
    let plain = opened.get(sealed);
    if (plain === undefined) {
      plain = openPrivateKey(sealed, id, keyEncryptionSecret);
      opened.set(sealed, plain);
    }
    return plain;
  };
  const secretsOf = (callback: CallbackRecord) => {
    const secrets = [open(callback.secret, callback.id)];
    const { previousSecret, rotatedAt } = callback;
    if (previousSecret && rotatedAt !== null && clock.now() - rotatedAt < PREVIOUS_SECRET_MS) {
      secrets.push(open(previousSecret, callback.id));
    }
    return secrets;
  };
  return async (callback, message) => {
    let secrets: string[];
    try {
      secrets = secretsOf(callback);
    } catch (error) {
      // A secret sealed with another HERALD_KEY_ENCRYPTION_SECRET: an attempt that failed (and
      // is listed with why), retried like any other, never a promise the sender leaves unfinished.
      const answer = {
        statusCode: null,
        error: `the callback's secret cannot be opened: ${(error as Error).message}`,
      };
      return { message, outcome: outcomeOf(answer, message, clock.now()), ...answer };
    }
    const answer = await poster.post({
      url: callback.url,
      messageId: message.id,
      timestamp: Math.floor(clock.now() / 1000),
      secrets,
      body: message.body,
      callbackId: callback.id,
      traceContext: message.traceContext,
    });
    const outcome = outcomeOf(answer, message, clock.now());
    return { message, outcome, statusCode: answer.statusCode, error: answer.error };
  };
}
