import { Type } from '@sinclair/typebox';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { withExample } from '../http/examples.ts';
import type { App, RouteModule } from '../http/types.ts';
import type { DeliveryReport } from '../notifications/delivery-report.ts';
import type { ReportService } from '../notifications/reports.ts';
import { mailgunParse } from './mailgun.ts';
import { sendgridReport } from './sendgrid.ts';
import {
  isFresh,
  sendgridPublicKey,
  verifyMailgun,
  verifySendgrid,
  verifyTwilio,
  WEBHOOK_FRESHNESS_S,
} from './signatures.ts';
import { twilioReport } from './twilio.ts';

/**
 * 401 for a bad or missing signature. Its own code, not AUTH_INVALID_TOKEN: no bearer token is
 * involved, and a provider's operator reading the logs should see what failed.
 */
function badSignature(provider: string): HeraldError {
  return new HeraldError(
    'WEBHOOK_SIGNATURE_INVALID',
    `The ${provider} signature is missing or does not match.`,
  );
}

/** 401 for a signed timestamp outside the freshness window (an old report replayed). */
function staleSignature(provider: string): HeraldError {
  return new HeraldError(
    'WEBHOOK_SIGNATURE_INVALID',
    `The ${provider} signature timestamp is more than ${WEBHOOK_FRESHNESS_S / 60} minutes from now.`,
  );
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new HeraldError('MALFORMED_BODY', 'The body is not valid JSON.');
  }
}

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
const isForm = (contentType: string | undefined) =>
  /^application\/x-www-form-urlencoded/i.test(contentType ?? '');

/** What a webhook call did with its reports (ReportService outcomes), and how many it ignored. */
const Outcomes = withExample(
  Type.Object({
    applied: Type.Integer(),
    unchanged: Type.Integer(),
    pending: Type.Integer(),
    duplicate: Type.Integer(),
    dropped: Type.Integer(),
    ignored: Type.Optional(Type.Integer()),
  }),
  { applied: 1, unchanged: 0, pending: 0, duplicate: 0, dropped: 0 },
);

const docs = (summary: string) => ({
  schema: {
    tags: ['webhooks'],
    summary,
    response: { 200: Outcomes },
    description:
      'Authenticated by the provider signature, not a bearer token. 401 when it is bad or missing.',
  },
});

/**
 * Provider callbacks: POST /webhooks/{twilio,sendgrid,mailgun}. Public routes, in their own
 * encapsulated scope whose parsers keep the raw bytes, because each signature covers the body
 * exactly as sent. Every verified report goes through the same ReportSink as SMPP receipts.
 */
export const webhookRoutes: RouteModule<CoreDeps & { reports: ReportService }> = async (app, deps) => {
  const sink = deps.reports;
  // Each route states its limit, so the server's Expect: 100-continue check knows it too.
  const route = (summary: string) => ({ ...docs(summary), bodyLimit: deps.config.webhookBodyLimit });
  const { providers, publicUrl } = deps.config;
  // Parse the key once: a malformed key fails start-up rather than every webhook.
  const sendgridKey = providers.sendgridWebhookPublicKey
    ? sendgridPublicKey(providers.sendgridWebhookPublicKey)
    : undefined;
  const applyAll = async (reports: DeliveryReport[]) => {
    const outcomes = { applied: 0, unchanged: 0, pending: 0, duplicate: 0, dropped: 0 };
    for (const report of reports) outcomes[await sink.apply(report)] += 1;
    return outcomes;
  };

  await app.register(async (scope: App) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      ['application/json', 'application/x-www-form-urlencoded'],
      { parseAs: 'buffer' },
      (_request, body, done) => done(null, body),
    );

    scope.post('/webhooks/twilio', route('Twilio message status callback'), async (request, reply) => {
      const raw = request.body as Buffer;
      if (!isForm(request.headers['content-type']))
        throw new HeraldError('UNSUPPORTED_MEDIA_TYPE', 'Twilio posts application/x-www-form-urlencoded.');
      const params = new URLSearchParams(raw.toString('utf8'));
      const token = providers.twilio?.authToken;
      const signature = header(request.headers['x-twilio-signature']);
      if (!token || !verifyTwilio(token, publicUrl + request.url, params, signature))
        throw badSignature('Twilio');
      const parsed = twilioReport(params, deps.clock.now());
      if ('problem' in parsed)
        throw new HeraldError('VALIDATION_FAILED', 'The status callback is not one Herald reads.', {
          errors: [{ path: 'body', message: parsed.problem }],
        });
      return reply.code(200).send(await applyAll([parsed.report]));
    });

    scope.post('/webhooks/sendgrid', route('SendGrid signed event webhook'), async (request, reply) => {
      const raw = request.body as Buffer;
      const events = parseJson(raw);
      const timestamp = header(request.headers['x-twilio-email-event-webhook-timestamp']);
      const ok =
        sendgridKey &&
        verifySendgrid(
          sendgridKey,
          timestamp,
          raw,
          header(request.headers['x-twilio-email-event-webhook-signature']),
        );
      if (!ok) throw badSignature('SendGrid');
      if (!isFresh(timestamp, deps.clock.now())) throw staleSignature('SendGrid');
      if (!Array.isArray(events))
        throw new HeraldError('VALIDATION_FAILED', 'SendGrid posts an array of events.', {
          errors: [{ path: 'body', message: 'must be an array' }],
        });
      const now = deps.clock.now();
      const reports = events.map((event) => sendgridReport(event, now)).filter((r) => r !== undefined);
      return reply.code(200).send({ ...(await applyAll(reports)), ignored: events.length - reports.length });
    });

    scope.post('/webhooks/mailgun', route('Mailgun event webhook'), async (request, reply) => {
      const raw = request.body as Buffer;
      const body = isForm(request.headers['content-type'])
        ? Object.fromEntries(new URLSearchParams(raw.toString('utf8')))
        : parseJson(raw);
      const parsed = mailgunParse(body, deps.clock.now());
      const key = providers.mailgunWebhookSigningKey;
      const { timestamp, token, signature } = parsed.signature;
      if (!key || !verifyMailgun(key, timestamp, token, signature)) throw badSignature('Mailgun');
      const now = deps.clock.now();
      if (!isFresh(timestamp, now)) throw staleSignature('Mailgun');
      // Each signature token once (kept for the freshness window, past which it is stale anyway).
      const used = String(token);
      if (!(await deps.store.reports.useToken('mailgun', used, now, now - WEBHOOK_FRESHNESS_S * 2000)))
        throw new HeraldError('WEBHOOK_SIGNATURE_INVALID', 'This Mailgun signature token was used before.');
      const reports = parsed.report ? [parsed.report] : [];
      try {
        return reply.code(200).send({ ...(await applyAll(reports)), ignored: 1 - reports.length });
      } catch (error) {
        // Not applied: Mailgun's retry with the same token must be accepted.
        await deps.store.reports.forgetToken('mailgun', used);
        throw error;
      }
    });
  });
};
