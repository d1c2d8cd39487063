import { createHash, createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';

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
const keys = new Map<string, KeyObject>();
const KEYS_KEPT = 1000;

function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= KEYS_KEPT) keys.clear();
    key = createSecretKey(Buffer.from(secret.slice(PREFIX.length), 'base64'));
    keys.set(secret, key);
  }
  return key;
}

/** The `webhook-signature` header: one `v1,` signature per secret, space-separated (rotation). */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  const signed = `${id}.${timestamp}.${body}`;
  let header = '';
  for (const secret of secrets) {
    const signature = createHmac('sha256', keyOf(secret)).update(signed).digest('base64');
    header += header ? ` v1,${signature}` : `v1,${signature}`;
  }
  return header;
}

/**
 * The message id (`webhook-id`) of a change for a callback: the same from every worker and on
 * every attempt, since it comes from the callback and the change's place in the status log. A
 * message sent again after a crash (at least once) keeps it, so receivers can de-duplicate.
 */
export function messageId(callbackId: string, cursor: string): string {
  return `msg_${createHash('sha256').update(`${callbackId}\n${cursor}`).digest('base64url').slice(0, 20)}`;
}
