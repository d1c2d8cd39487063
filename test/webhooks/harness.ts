import { createHmac, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { manualClock } from '../../src/clock.ts';
import { buildApp } from '../../src/http/app.ts';
import type { App } from '../../src/http/types.ts';
import { createReportService } from '../../src/notifications/reports.ts';
import type { Store } from '../../src/store/port/index.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { webhookRoutes } from '../../src/webhooks/routes.ts';
import { testConfig } from '../helpers/config.ts';

export const PUBLIC_URL = 'https://herald.example.com';
export const TWILIO_TOKEN = 'twilio-auth-token-for-tests';
export const MAILGUN_KEY = 'key-mailgun-signing-for-tests';

/** An app serving only the webhook routes, over a real SQLite store, with the providers' secrets set. */
export async function webhookApp(
  shared?: Store,
): Promise<{ app: App; store: Store; sendgridKey: KeyObject; clock: ReturnType<typeof manualClock> }> {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const config = testConfig({
    HERALD_PUBLIC_URL: PUBLIC_URL,
    TWILIO_ACCOUNT_SID: 'AC0123456789abcdef0123456789abcdef',
    TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
    TWILIO_FROM: '+15550000000',
    // The form the SendGrid console shows: base64 DER SubjectPublicKeyInfo.
    SENDGRID_WEBHOOK_PUBLIC_KEY: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    MAILGUN_WEBHOOK_SIGNING_KEY: MAILGUN_KEY,
  });
  const store = shared ?? createSqliteStore(config.dataDir);
  const clock = manualClock();
  const reports = createReportService(store, clock);
  const app = await buildApp({
    logLevel: 'silent',
    bodyLimit: config.bodyLimit,
    requestTimeoutMs: 30_000,
    public: [(scope) => webhookRoutes(scope, { config, store, clock, reports })],
    protected: [],
    protect: () => {},
    onClose: async () => {
      if (!shared) await store.close();
    },
  });
  return { app, store, sendgridKey: privateKey, clock };
}

/** Twilio's documented algorithm, written out independently of the code under test. */
export function signTwilio(url: string, form: Record<string, string>, token = TWILIO_TOKEN): string {
  const data = Object.keys(form)
    .sort()
    .reduce((acc, key) => acc + key + form[key], url);
  return createHmac('sha1', token).update(data).digest('base64');
}

/** SendGrid's signed event webhook headers for a raw body. */
export function signSendgrid(key: KeyObject, body: string, timestamp = '1767225600') {
  const signature = sign('sha256', Buffer.from(timestamp + body), key).toString('base64');
  return {
    'x-twilio-email-event-webhook-signature': signature,
    'x-twilio-email-event-webhook-timestamp': timestamp,
  };
}

/** Mailgun's `signature` object for a webhook body; a fresh token each time, as Mailgun sends. */
export function signMailgun(
  token = randomBytes(25).toString('hex'),
  timestamp = '1767225600',
  key = MAILGUN_KEY,
) {
  return {
    timestamp,
    token,
    signature: createHmac('sha256', key)
      .update(timestamp + token)
      .digest('hex'),
  };
}
