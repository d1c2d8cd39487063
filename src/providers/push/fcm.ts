import type { Config } from '../../config/config.ts';
import type { Recipient } from '../../notifications/model.ts';
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
  shortText,
} from './common.ts';
import { createFcmTokenSource, FcmAuthError } from './fcm-auth.ts';

type FcmConfig = NonNullable<Config['providers']['fcm']>;

/** Error codes (google.firebase.fcm.v1.FcmError) and statuses and how they are treated. */
const PERMANENT = new Set(['UNREGISTERED', 'INVALID_ARGUMENT', 'SENDER_ID_MISMATCH', 'NOT_FOUND']);
const TRANSIENT = new Set(['QUOTA_EXCEEDED', 'UNAVAILABLE', 'INTERNAL', 'RESOURCE_EXHAUSTED']);
const CONFIG = new Set(['THIRD_PARTY_AUTH_ERROR', 'PERMISSION_DENIED', 'UNAUTHENTICATED']);

/** Firebase Cloud Messaging HTTP v1 with service-account OAuth, over fetch. */
export function createFcmProvider(
  config: FcmConfig,
  deps: ProviderDeps,
  options: PushProviderOptions = {},
): Provider {
  const tokens = createFcmTokenSource({ serviceAccountFile: config.serviceAccountFile, clock: deps.clock });

  async function post(url: string, body: string, signal: AbortSignal): Promise<SendResult | Response> {
    let accessToken: string;
    try {
      accessToken = await tokens.get(signal);
    } catch (error) {
      if (!(error instanceof FcmAuthError)) throw error;
      return { ok: false, kind: error.kind, detail: error.message, retryAfterMs: error.retryAfterMs };
    }
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
        body,
        signal,
      });
      if (response.status === 401) tokens.invalidate(accessToken);
      return response;
    } catch (error) {
      return networkFailure(error);
    }
  }

  return {
    name: 'fcm',
    channel: 'push',
    // FCM's default quota is 600,000 messages a minute per project; stay well inside it.
    limits: limitsWith({ concurrency: 100, ratePerSecond: 1000, burst: 1000 }, options.limits),
    accepts: (recipient: Recipient) => recipient.platform === 'fcm' && Boolean(recipient.deviceToken),
    async send(message: OutgoingMessage, signal: AbortSignal): Promise<SendResult> {
      if (!message.recipient.deviceToken) {
        return { ok: false, kind: 'permanent', detail: 'recipient has no FCM registration token' };
      }
      let projectId: string;
      try {
        projectId = (await tokens.account()).projectId;
      } catch (error) {
        if (!(error instanceof FcmAuthError)) throw error;
        return { ok: false, kind: error.kind, detail: error.message };
      }
      const url = `${config.apiBase}/v1/projects/${encodeURIComponent(projectId)}/messages:send`;
      const body = JSON.stringify({ message: fcmMessage(message) });
      const bounded = requestSignal(signal, options.timeoutMs);
      let outcome = await post(url, body, bounded);
      // A 401 means the cached access token was revoked early: exchange once more, then give up.
      if (outcome instanceof Response && outcome.status === 401) {
        await outcome.body?.cancel();
        outcome = await post(url, body, bounded);
      }
      if (!(outcome instanceof Response)) return outcome;
      return resultOf(outcome, await readCapped(outcome, 64 * 1024), deps);
    },
  };
}

/**
 * The v1 message. `data` values must be strings in FCM, so others are sent as JSON. The
 * notification ID rides along in `data` and as the collapse key on both platforms, so a
 * retried send replaces, rather than doubles, a copy still waiting on the device side.
 */
function fcmMessage(message: OutgoingMessage): Record<string, unknown> {
  const { title, body, data } = pushPayload(message.content);
  const strings: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) {
    strings[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  strings.notificationId = message.notificationId;
  const urgent = isUrgent(message.priority);
  return {
    token: message.recipient.deviceToken,
    ...(title || body ? { notification: { title, body } } : {}),
    data: strings,
    android: { priority: urgent ? 'HIGH' : 'NORMAL', collapse_key: message.notificationId },
    apns: { headers: { 'apns-priority': urgent ? '10' : '5', 'apns-collapse-id': message.notificationId } },
  };
}

function resultOf(response: Response, text: string, deps: ProviderDeps): SendResult {
  let parsed: { name?: string; error?: { status?: string; message?: string; details?: unknown[] } } = {};
  try {
    parsed = JSON.parse(text);
  } catch {
    // A non-JSON body (a proxy's error page): the HTTP status decides alone.
  }
  if (response.ok && parsed.name)
    return { ok: true, providerMessageId: parsed.name, detail: 'accepted by FCM' };
  const error = parsed.error ?? {};
  const code = errorCodeOf(error.details) ?? error.status ?? `HTTP_${response.status}`;
  const detail = `${code} (${response.status})${error.message ? `: ${shortText(error.message)}` : ''}`;
  const status = response.status;
  if (code === 'UNREGISTERED') return { ok: false, kind: 'permanent', detail, suppress: 'unregistered' };
  if (TRANSIENT.has(code) || status === 429 || status >= 500) {
    return {
      ok: false,
      kind: 'transient',
      detail,
      retryAfterMs: retryAfterMs(response.headers.get('retry-after'), deps.clock.now()),
    };
  }
  if (CONFIG.has(code) || status === 401 || status === 403) return { ok: false, kind: 'config', detail };
  if (PERMANENT.has(code) || status >= 400) return { ok: false, kind: 'permanent', detail };
  // A 2xx without a message name is not a confirmed send: try again.
  return { ok: false, kind: 'transient', detail: `FCM answered ${status} without a message name` };
}

/** The FcmError code from `details`, which is more precise than the canonical status. */
function errorCodeOf(details: unknown[] | undefined): string | undefined {
  for (const detail of details ?? []) {
    const entry = detail as { '@type'?: string; errorCode?: string };
    if (entry['@type']?.endsWith('google.firebase.fcm.v1.FcmError') && entry.errorCode)
      return entry.errorCode;
  }
  return undefined;
}
