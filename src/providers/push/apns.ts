import type { Config } from '../../config/config.ts';
import type { Recipient } from '../../notifications/model.ts';
import { retryAfterMs } from '../retry-after.ts';
import type { OutgoingMessage, Provider, ProviderDeps, SendResult } from '../types.ts';
import { ApnsKeyError, createApnsTokenSource } from './apns-token.ts';
import {
  isUrgent,
  limitsWith,
  networkFailure,
  type PushProviderOptions,
  pushPayload,
  requestSignal,
} from './common.ts';
import { createHttp2Client, type Http2Answer } from './http2-client.ts';

type ApnsConfig = NonNullable<Config['providers']['apns']>;

/** APNs refuses larger payloads with 413 PayloadTooLarge; checking first saves the round trip. */
const MAX_PAYLOAD_BYTES = 4096;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Reasons that mean our setup is wrong (key, team, topic), so every send would fail alike. */
const CONFIG_REASONS = new Set([
  'InvalidProviderToken',
  'MissingProviderToken',
  'BadCertificate',
  'BadCertificateEnvironment',
  'BadTopic',
  'MissingTopic',
  'TopicDisallowed',
]);

/** Apple Push Notification service over HTTP/2 with token (.p8) authentication. */
export function createApnsProvider(
  config: ApnsConfig,
  deps: ProviderDeps,
  options: PushProviderOptions = {},
): Provider {
  const tokens = createApnsTokenSource({ ...config, clock: deps.clock });
  const client = createHttp2Client(config.host);

  return {
    name: 'apns',
    channel: 'push',
    // One HTTP/2 connection; Apple allows up to 1000 concurrent streams on it.
    limits: limitsWith({ concurrency: 200, ratePerSecond: 1000, burst: 1000 }, options.limits),
    accepts: (recipient: Recipient) => recipient.platform === 'apns' && Boolean(recipient.deviceToken),
    async send(message: OutgoingMessage, signal: AbortSignal): Promise<SendResult> {
      const deviceToken = message.recipient.deviceToken;
      if (!deviceToken || !/^[0-9a-fA-F]{1,200}$/.test(deviceToken)) {
        return {
          ok: false,
          kind: 'permanent',
          detail: 'BadDeviceToken: not a hexadecimal APNs device token',
        };
      }
      const { body, pushType } = apnsBody(message);
      if (Buffer.byteLength(body) > MAX_PAYLOAD_BYTES) {
        return { ok: false, kind: 'permanent', detail: `PayloadTooLarge: over ${MAX_PAYLOAD_BYTES} bytes` };
      }
      let token: string;
      try {
        token = await tokens.get();
      } catch (error) {
        if (error instanceof ApnsKeyError) return { ok: false, kind: 'config', detail: error.message };
        throw error;
      }
      const headers: Record<string, string> = {
        ':path': `/3/device/${deviceToken}`,
        authorization: `bearer ${token}`,
        'apns-topic': config.topic,
        'apns-push-type': pushType,
        // Apple requires priority 5 for background pushes.
        'apns-priority': pushType === 'alert' && isUrgent(message.priority) ? '10' : '5',
        'content-type': 'application/json',
      };
      // The notification ID as apns-id: Apple echoes it, and it identifies a retried send.
      if (UUID.test(message.notificationId)) headers['apns-id'] = message.notificationId.toLowerCase();
      let answer: Http2Answer;
      try {
        answer = await client.request(headers, body, requestSignal(signal, options.timeoutMs));
      } catch (error) {
        return networkFailure(error);
      }
      const result = resultOf(answer, deps);
      if (!result.ok && result.detail.startsWith('ExpiredProviderToken')) tokens.invalidate(token);
      return result;
    },
    close: () => client.close(),
  };
}

/** An alert when there is something to show; otherwise a silent background push carrying the data. */
function apnsBody(message: OutgoingMessage): { body: string; pushType: 'alert' | 'background' } {
  const { title, body, data } = pushPayload(message.content);
  const custom = { ...data, notificationId: message.notificationId };
  if (!title && !body) {
    return { body: JSON.stringify({ ...custom, aps: { 'content-available': 1 } }), pushType: 'background' };
  }
  return {
    body: JSON.stringify({ ...custom, aps: { alert: { title, body }, sound: 'default' } }),
    pushType: 'alert',
  };
}

function resultOf(answer: Http2Answer, deps: ProviderDeps): SendResult {
  const apnsId = firstOf(answer.headers['apns-id']);
  if (answer.status === 200) return { ok: true, providerMessageId: apnsId, detail: '200 accepted by APNs' };
  let reason = 'unknown';
  try {
    reason = String((JSON.parse(answer.body) as { reason?: unknown }).reason ?? reason);
  } catch {
    // A non-JSON error body (a proxy's page): the status decides alone.
  }
  const detail = `${reason} (${answer.status})`;
  const status = answer.status;
  // Unregistered (410) and BadDeviceToken: the token will never take a push again.
  if (status === 410 || reason === 'BadDeviceToken')
    return { ok: false, kind: 'permanent', detail, suppress: 'unregistered' };
  if (status === 429 || status >= 500 || reason === 'ExpiredProviderToken') {
    return {
      ok: false,
      kind: 'transient',
      detail,
      retryAfterMs: retryAfterMs(answer.headers['retry-after'], deps.clock.now()),
    };
  }
  if (CONFIG_REASONS.has(reason) || status === 403) return { ok: false, kind: 'config', detail };
  // DeviceTokenNotForTopic, PayloadTooLarge, BadPath and other 4xx: this message only.
  return { ok: false, kind: 'permanent', detail };
}

function firstOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
