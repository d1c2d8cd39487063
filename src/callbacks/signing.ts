import { createHash, createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { madeOnce } from '../made-once.ts';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): a secret is `whsec_` + base64 of
 * random bytes, and a message's signature is `v1,` + base64 of HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the secret's decoded bytes. Receivers
 * verify with the `standardwebhooks` libraries; test/callbacks does exactly that.
 */
const PREFIX = 'whsec_';
/** 32 random bytes: the specification asks for 24 to 64. */
const SECRET_BYTES = 32;

/** A new callback secret. */
export function newSecret(): string {
  return PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** Secrets' keys, decoded once: a burst signs thousands of messages with the same few. */
const keyOf = madeOnce<string, KeyObject>(new LRUCache<string, KeyObject>({ max: 1000 }), (secret: string) =>
  createSecretKey(Buffer.from(secret.slice(PREFIX.length), 'base64')),
);

/** The `webhook-signature` header: one `v1,` signature per secret, space-separated (rotation). */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  const signed = `${id}.${timestamp}.${body}`;
  return secrets
    .map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(signed).digest('base64')}`)
    .join(' ');
}

/**
 * The message id (`webhook-id`) of a change for a callback: the same from every worker and on
 * every attempt, since it comes from the callback and the change's place in the status log. A
 * message sent again after a crash (at least once) keeps it, so receivers can de-duplicate.
 */
export function messageId(callbackId: string, cursor: string): string {
  return `msg_${createHash('sha256').update(`${callbackId}\n${cursor}`).digest('base64url').slice(0, 20)}`;
}
