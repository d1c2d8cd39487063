import { createHmac, createPublicKey, type KeyObject, verify } from 'node:crypto';
import { safeEqual } from '../safe-equal.ts';

/**
 * Twilio's request signature (X-Twilio-Signature): base64 HMAC-SHA1, keyed by the auth token,
 * over the full URL followed by every POST parameter name and value, sorted by name (values of
 * a repeated name sorted too).
 */
function twilioSignature(authToken: string, url: string, params: URLSearchParams): string {
  const pairs = [...params.entries()].sort(([ak, av], [bk, bv]) =>
    ak === bk ? (av < bv ? -1 : av > bv ? 1 : 0) : ak < bk ? -1 : 1,
  );
  const data = url + pairs.map(([key, value]) => key + value).join('');
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

export function verifyTwilio(
  authToken: string,
  url: string,
  params: URLSearchParams,
  signature: string | undefined,
): boolean {
  if (!signature) return false;
  return safeEqual(twilioSignature(authToken, url, params), signature);
}

/** How far a signed webhook timestamp may be from now, either way, in seconds. */
export const WEBHOOK_FRESHNESS_S = 300;

/**
 * Whether a signed timestamp (Unix seconds, as a string or number) is within the freshness
 * window of `now` (epoch ms): an old signed report replayed later is refused.
 */
export function isFresh(timestamp: unknown, now: number): boolean {
  const seconds =
    typeof timestamp === 'string' && /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : timestamp;
  return typeof seconds === 'number' && Math.abs(now / 1000 - seconds) <= WEBHOOK_FRESHNESS_S;
}

/** Mailgun's webhook signature: hex HMAC-SHA256 of timestamp + token, keyed by the signing key. */
function mailgunSignature(signingKey: string, timestamp: string, token: string): string {
  return createHmac('sha256', signingKey)
    .update(timestamp + token, 'utf8')
    .digest('hex');
}

export function verifyMailgun(
  signingKey: string,
  timestamp: unknown,
  token: unknown,
  signature: unknown,
): boolean {
  // Mailgun sends the timestamp as a string; accept a number too rather than refuse a valid report.
  const time = typeof timestamp === 'number' ? String(timestamp) : timestamp;
  if (typeof time !== 'string' || typeof token !== 'string' || typeof signature !== 'string') return false;
  return safeEqual(mailgunSignature(signingKey, time, token), signature.toLowerCase());
}

/**
 * SendGrid's verification key as the console shows it (base64 DER SubjectPublicKeyInfo) or as
 * PEM. Parsed once at start-up; a key that is not an EC P-256 key is a configuration error.
 */
export function sendgridPublicKey(configured: string): KeyObject {
  const key = configured.includes('BEGIN PUBLIC KEY')
    ? createPublicKey(configured)
    : createPublicKey({ key: Buffer.from(configured, 'base64'), format: 'der', type: 'spki' });
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new TypeError('SENDGRID_WEBHOOK_PUBLIC_KEY must be an ECDSA P-256 public key');
  }
  return key;
}

/** SendGrid's signed event webhook: ECDSA P-256 / SHA-256 (DER, base64) over timestamp + raw body. */
export function verifySendgrid(
  key: KeyObject,
  timestamp: string | undefined,
  rawBody: Buffer,
  signature: string | undefined,
): boolean {
  if (!timestamp || !signature) return false;
  try {
    const payload = Buffer.concat([Buffer.from(timestamp, 'utf8'), rawBody]);
    return verify('sha256', payload, key, Buffer.from(signature, 'base64'));
  } catch {
    // A malformed DER signature throws rather than returning false.
    return false;
  }
}
