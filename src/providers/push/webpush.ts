import { createHash } from 'node:crypto';
import { Agent, fetch } from 'undici';
import webpush from 'web-push';
import type { Config } from '../../config/config.ts';
import type { Recipient } from '../../notifications/model.ts';
import { isAllowedHost, refusedUrl } from '../outbound.ts';
import { createPublicOnlyConnector, refusedAtConnect } from '../outbound-connect.ts';
import { retryAfterMs } from '../retry-after.ts';
import type { OutgoingMessage, Provider, ProviderDeps, SendResult } from '../types.ts';
import {
  isUrgent,
  limitsWith,
  networkFailure,
  type PushProviderOptions,
  pushPayload,
  readCapped,
  requestSignal,
} from './common.ts';

type VapidConfig = NonNullable<Config['providers']['vapid']>;

/** Four weeks, the longest push services keep a message (and web-push's own default). */
const DEFAULT_TTL_SECONDS = 28 * 24 * 3600;
/** One aes128gcm record in a 4096-byte push message: 4096 - 86 header - 16 tag - 1 delimiter. */
const MAX_PLAINTEXT_BYTES = 3993;

/**
 * Web Push (RFC 8030) with VAPID (RFC 8292) and aes128gcm payload encryption (RFC 8291).
 * The web-push package builds the signed, encrypted request; sending it over fetch keeps the
 * scheduler's abort signal and the response headers (Location, Retry-After) in our hands.
 */
export function createWebPushProvider(
  config: VapidConfig,
  deps: ProviderDeps,
  options: PushProviderOptions = {},
): Provider {
  const vapidDetails = {
    subject: config.subject,
    publicKey: config.publicKey,
    privateKey: config.privateKey,
  };
  const vapidProblem = checkVapid(vapidDetails);
  if (vapidProblem) deps.log.error({ provider: 'webpush' }, `VAPID configuration unusable: ${vapidProblem}`);
  // Endpoints are caller-chosen: connections to hosts not listed in HERALD_PUSH_ALLOWED_HOSTS
  // connect through createPublicOnlyConnector, which refuses private addresses at connect time.
  const allowedHosts = deps.config.providers.pushAllowedHosts ?? [];
  const publicOnly = new Agent({ connect: createPublicOnlyConnector() });
  const listed = new Agent();

  return {
    name: 'webpush',
    channel: 'push',
    limits: limitsWith({ concurrency: 64, ratePerSecond: 500, burst: 500 }, options.limits),
    accepts: (recipient: Recipient) => Boolean(recipient.subscription?.endpoint),
    // Each subscription names its push service: a circuit per service origin, so one broken
    // service (or one that refuses this sender) holds back no other.
    circuitKey: (recipient: Recipient) => originOf(recipient.subscription?.endpoint),
    async send(message: OutgoingMessage, signal: AbortSignal): Promise<SendResult> {
      if (vapidProblem) return { ok: false, kind: 'config', detail: `VAPID configuration: ${vapidProblem}` };
      const subscription = message.recipient.subscription;
      if (!subscription)
        return { ok: false, kind: 'permanent', detail: 'recipient has no push subscription' };
      // RFC 8030 push services are HTTPS only; refusing other schemes and private address
      // literals (checked at acceptance too, but rows may predate a change of the list) keeps a
      // caller-chosen endpoint from reaching services inside the network.
      const refused = refusedUrl(subscription.endpoint, allowedHosts);
      if (refused) return { ok: false, kind: 'permanent', detail: `push subscription endpoint ${refused}` };
      const payload = JSON.stringify({
        notificationId: message.notificationId,
        ...pushPayload(message.content),
      });
      if (Buffer.byteLength(payload) > MAX_PLAINTEXT_BYTES) {
        return { ok: false, kind: 'permanent', detail: `payload over ${MAX_PLAINTEXT_BYTES} bytes` };
      }
      let request: webpush.RequestDetails;
      try {
        request = webpush.generateRequestDetails(subscription, payload, {
          vapidDetails,
          TTL: DEFAULT_TTL_SECONDS,
          urgency: urgencyOf(message),
          topic: topicOf(message.notificationId),
        });
      } catch (error) {
        // VAPID was checked above, so what is left is a malformed subscription (endpoint or keys).
        return { ok: false, kind: 'permanent', detail: `invalid subscription: ${(error as Error).message}` };
      }
      let response: Awaited<ReturnType<typeof fetch>>;
      try {
        response = await fetch(request.endpoint, {
          method: 'POST',
          headers: headersOf(request),
          body: request.body ? new Uint8Array(request.body) : undefined,
          redirect: 'manual',
          signal: requestSignal(signal, options.timeoutMs),
          dispatcher: isAllowedHost(new URL(request.endpoint), allowedHosts) ? listed : publicOnly,
        });
      } catch (error) {
        // The endpoint's name resolves to a private address: this subscription's fault alone.
        if (refusedAtConnect(error))
          return {
            ok: false,
            kind: 'permanent',
            detail: 'push subscription endpoint resolves to a private address',
          };
        return networkFailure(error);
      }
      // The answer's body is read (so the connection can be reused) but never copied into an
      // event: a caller-chosen endpoint must not turn Herald into a reader of other services.
      await readCapped(response);
      return resultOf(response, deps);
    },
    async close() {
      await Promise.all([publicOnly.close(), listed.close()]);
    },
  };
}

function checkVapid(details: { subject: string; publicKey: string; privateKey: string }): string | undefined {
  try {
    webpush.getVapidHeaders(
      'https://push.example',
      details.subject,
      details.publicKey,
      details.privateKey,
      'aes128gcm',
    );
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function urgencyOf(message: OutgoingMessage): webpush.Urgency {
  if (isUrgent(message.priority)) return 'high';
  return message.priority === 'LOW' ? 'low' : 'normal';
}

/**
 * The Topic header makes the push service replace a not-yet-delivered message with the same
 * topic, so a retry after a lost response does not show the notification twice: the
 * notification ID serves as the idempotency key. Topics are at most 32 base64url characters;
 * a UUID without dashes is exactly 32 hex digits.
 */
export function topicOf(notificationId: string): string {
  const compact = notificationId.replace(/-/g, '');
  if (/^[A-Za-z0-9_-]{1,32}$/.test(compact)) return compact;
  return createHash('sha256').update(notificationId).digest('base64url').slice(0, 32);
}

function headersOf(request: webpush.RequestDetails): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    // fetch computes the length itself and refuses a conflicting one.
    if (name.toLowerCase() !== 'content-length') headers[name] = String(value);
  }
  return headers;
}

function originOf(endpoint: string | undefined): string | undefined {
  if (!endpoint) return undefined;
  try {
    return new URL(endpoint).origin;
  } catch {
    return undefined;
  }
}

/**
 * Maps a push service's answer. Every 4xx is about this subscription or message (401 and 403
 * included: RFC 8292 services answer them for a subscription bound to another key or a JWT they
 * will not take for it), so it fails this notification only and never opens the circuit; 429
 * and 5xx are the service's own trouble. Events carry the status and Herald's reason, not the
 * service's text.
 */
function resultOf(response: Pick<Response, 'status' | 'headers'>, deps: ProviderDeps): SendResult {
  const status = response.status;
  if (status >= 200 && status < 300) {
    return {
      ok: true,
      providerMessageId: response.headers.get('location') ?? undefined,
      detail: `${status} accepted by push service`,
    };
  }
  const retryAfter = retryAfterMs(response.headers.get('retry-after'), deps.clock.now());
  if (status === 404 || status === 410) {
    return {
      ok: false,
      kind: 'permanent',
      detail: `push service answered ${status}: subscription gone`,
      suppress: 'unregistered',
    };
  }
  if (status === 429 || status >= 500) {
    return {
      ok: false,
      kind: 'transient',
      detail: `push service answered ${status}: try later`,
      retryAfterMs: retryAfter,
    };
  }
  const reason =
    status === 401 || status === 403 ? 'refused this sender for the subscription' : 'refused the message';
  return { ok: false, kind: 'permanent', detail: `push service answered ${status}: ${reason}` };
}
