import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createStall, type Stall } from './stall.ts';

/** A scripted answer for one destination number: HTTP status, Twilio error body, headers. */
export interface TwilioScript {
  status: number;
  code?: number;
  message?: string;
  headers?: Record<string, string>;
  /** Answer this many times, then behave normally (default: always). */
  times?: number;
}

/** One Messages API request as the peer received it. */
export interface TwilioRequest {
  accountSid: string;
  authorization: string | undefined;
  idempotencyToken: string | undefined;
  form: Record<string, string>;
  sid?: string;
  /** When the request arrived, epoch ms. */
  at: number;
}

/** A status callback the way Twilio would post it: the URL it calls, the form, and X-Twilio-Signature. */
export interface TwilioCallback {
  url: string;
  path: string;
  form: Record<string, string>;
  signature: string;
}

export interface TwilioPeer {
  apiBase: string;
  requests: TwilioRequest[];
  /** Per-number slowness: the answer waits `stall.delay(To)` ms (recorded on arrival). */
  stall: Stall;
  /** Scripts the answer for messages to `to`. */
  script(to: string, answer: TwilioScript): void;
  /** Builds the signed status callback for a message the peer accepted. */
  callback(sid: string, status: string, extra?: Record<string, string>): TwilioCallback;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/**
 * A local stand-in for api.twilio.com's Messages resource, with its request and response shapes:
 * form body, Basic auth (wrong credentials get 401 / 20003), 201 with a Message SID, error bodies
 * `{ code, message, more_info, status }`.
 */
export async function startTwilioPeer(
  accountSid: string,
  authToken: string,
  /** Runs after a message is accepted and before the API answers (to race a callback ahead of it). */
  beforeRespond?: (sid: string) => Promise<void>,
): Promise<TwilioPeer> {
  const requests: TwilioRequest[] = [];
  const scripts = new Map<string, TwilioScript>();
  const stall = createStall();
  const expectedAuth = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
  const path = `/2010-04-01/Accounts/${accountSid}/Messages.json`;
  const server = createServer(async (request, response) => {
    const raw = await readBody(request);
    if (request.method !== 'POST' || !request.url?.startsWith('/2010-04-01/Accounts/')) {
      return send(response, 404, {
        code: 20404,
        message: 'The requested resource was not found',
        status: 404,
      });
    }
    const form = Object.fromEntries(new URLSearchParams(raw));
    const entry: TwilioRequest = {
      accountSid: request.url.split('/')[3] ?? '',
      authorization: request.headers.authorization,
      idempotencyToken: request.headers['i-twilio-idempotency-token'] as string | undefined,
      form,
      at: Date.now(),
    };
    requests.push(entry);
    await stall.wait(form.To ?? '');
    if (request.headers.authorization !== expectedAuth || request.url !== path) {
      return send(response, 401, { code: 20003, message: 'Authenticate', more_info: '', status: 401 });
    }
    if (!/^application\/x-www-form-urlencoded/.test(request.headers['content-type'] ?? '')) {
      return send(response, 400, { code: 20001, message: 'Expected a form body', status: 400 });
    }
    const script = form.To ? scripts.get(form.To) : undefined;
    if (script) {
      if (script.times !== undefined && --script.times <= 0 && form.To) scripts.delete(form.To);
      return send(
        response,
        script.status,
        {
          code: script.code,
          message: script.message ?? 'scripted error',
          more_info: '',
          status: script.status,
        },
        script.headers,
      );
    }
    if (!form.To || !form.Body || !(form.From || form.MessagingServiceSid)) {
      return send(response, 400, { code: 21604, message: "A 'To' phone number is required.", status: 400 });
    }
    entry.sid = `SM${randomBytes(16).toString('hex')}`;
    if (beforeRespond) await beforeRespond(entry.sid);
    return send(response, 201, {
      sid: entry.sid,
      account_sid: accountSid,
      to: form.To,
      from: form.From ?? null,
      messaging_service_sid: form.MessagingServiceSid ?? null,
      body: form.Body,
      status: 'queued',
      num_segments: '1',
      direction: 'outbound-api',
      error_code: null,
      error_message: null,
      uri: `${path.replace('.json', '')}/${entry.sid}.json`,
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiBase: `http://127.0.0.1:${port}`,
    requests,
    stall,
    script(to, answer) {
      scripts.set(to, { ...answer });
    },
    callback(sid, status, extra = {}) {
      const request = requests.find((r) => r.sid === sid);
      if (!request?.form.StatusCallback) throw new Error(`no accepted message ${sid} with a StatusCallback`);
      const url = request.form.StatusCallback;
      const form = {
        AccountSid: accountSid,
        ApiVersion: '2010-04-01',
        From: request.form.From ?? '',
        MessageSid: sid,
        MessageStatus: status,
        SmsSid: sid,
        SmsStatus: status,
        To: request.form.To ?? '',
        ...extra,
      };
      const data = Object.keys(form)
        .sort()
        .reduce((acc, key) => acc + key + form[key as keyof typeof form], url);
      const signature = createHmac('sha1', authToken).update(data).digest('base64');
      return { url, path: new URL(url).pathname, form, signature };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
