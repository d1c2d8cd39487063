import { retryAfterMs } from '../retry-after.ts';
import type { Provider, ProviderDeps, ProviderLimits, SendResult } from '../types.ts';
import { smsProvider } from './sms-provider.ts';
import { classifyTwilioError } from './twilio-errors.ts';

/** The Twilio provider's configuration (TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM, TWILIO_API_BASE). */
export interface TwilioConfig {
  accountSid: string;
  authToken: string;
  /** A phone number in E.164, or a Messaging Service SID (MG...). */
  from: string;
  apiBase: string;
}

/** Per-provider limits; Twilio queues on its side, so these bound Herald's request rate. */
export type TwilioOptions = Partial<ProviderLimits> & { timeoutMs?: number };

const DEFAULTS: ProviderLimits = { concurrency: 16, ratePerSecond: 50, burst: 50 };

interface TwilioBody {
  sid?: string;
  status?: string;
  code?: number;
  message?: string;
}

async function readJson(response: Response): Promise<TwilioBody> {
  try {
    return (await response.json()) as TwilioBody;
  } catch {
    return {};
  }
}

/**
 * SMS through the Twilio Messages API: a form POST with Basic auth, StatusCallback pointing at
 * Herald's signed webhook, and the Message SID recorded as the provider message id. Twilio has
 * no idempotency key on Messages; the notification ID is sent in `I-Twilio-Idempotency-Token`
 * for tracing and the at-least-once retry rules apply.
 */
export function createTwilioProvider(
  config: TwilioConfig,
  deps: ProviderDeps,
  options: TwilioOptions = {},
): Provider {
  const limits: ProviderLimits = {
    concurrency: options.concurrency ?? DEFAULTS.concurrency,
    ratePerSecond: options.ratePerSecond ?? DEFAULTS.ratePerSecond,
    burst: options.burst ?? options.ratePerSecond ?? DEFAULTS.burst,
  };
  const endpoint = `${config.apiBase}/2010-04-01/Accounts/${encodeURIComponent(config.accountSid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${config.accountSid}:${config.authToken}`).toString('base64')}`;
  const statusCallback = `${deps.config.publicUrl}/webhooks/twilio`;
  const sender = config.from.startsWith('MG') ? 'MessagingServiceSid' : 'From';
  const timeoutMs = options.timeoutMs ?? 15_000;

  async function post(
    form: URLSearchParams,
    notificationId: string,
    signal: AbortSignal,
  ): Promise<SendResult> {
    let response: Response;
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers: {
          authorization,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          'i-twilio-idempotency-token': notificationId,
        },
        body: form,
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      });
    } catch (error) {
      const name = (error as Error).name;
      return { ok: false, kind: 'transient', detail: `twilio request failed: ${name}` };
    }
    const body = await readJson(response);
    if (response.ok && body.sid) {
      return { ok: true, providerMessageId: body.sid, detail: `twilio ${body.status ?? 'accepted'}` };
    }
    const failure = classifyTwilioError(
      response.status,
      typeof body.code === 'number' ? body.code : undefined,
      body.message ?? response.statusText,
      retryAfterMs(response.headers.get('retry-after'), deps.clock.now()),
    );
    if (failure.kind === 'config')
      deps.log.error({ provider: 'twilio', status: response.status }, failure.detail);
    return failure;
  }

  return smsProvider({
    name: 'twilio',
    limits,
    submit(to, text, message, signal) {
      const form = new URLSearchParams({
        To: to,
        [sender]: config.from,
        Body: text,
        StatusCallback: statusCallback,
      });
      return post(form, message.notificationId, signal);
    },
  });
}
