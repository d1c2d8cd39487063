import type { IncomingMessage } from 'node:http';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import { exampleOf, withExample } from '../http/examples.ts';
import { headersOf, problemOf } from '../http/problem.ts';
import { requestSpan } from '../http/trace-hooks.ts';
import type { App, RouteModule } from '../http/types.ts';
import type { QuotaGate } from '../quotas/gate.ts';
import { type ItemVerdict, MAX_ITEMS } from './batch-body.ts';
import { malformedBody, readBytes } from './batch-bytes.ts';
import type { BatchDecoder } from './batch-decoder.ts';
import type { Ingest } from './ingest.ts';
import type { RecipientDigests } from './recipient-digest.ts';
import { Accepted, NOTIFICATION_ID_EXAMPLE, NotificationBody } from './schemas.ts';

const BatchBody = withExample(
  Type.Object(
    { notifications: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_ITEMS }) },
    { additionalProperties: false },
  ),
  {
    notifications: [
      exampleOf(NotificationBody),
      { channel: 'sms', recipient: { phone: '+15550001111' }, content: { text: 'Your code is 424242' } },
    ],
  },
);
const BatchResults = withExample(
  Type.Object({
    results: Type.Array(
      Type.Object({
        index: Type.Integer(),
        notificationId: Type.Optional(Type.String()),
        status: Type.Optional(Type.String()),
        error: Type.Optional(Type.Unknown()),
      }),
    ),
  }),
  {
    results: [
      { index: 0, notificationId: NOTIFICATION_ID_EXAMPLE, status: 'QUEUED' },
      {
        index: 1,
        error: {
          type: 'https://herald.dev/problems/validation-failed',
          title: 'Validation failed',
          status: 400,
          code: 'VALIDATION_FAILED',
          detail: 'The notification is invalid.',
          errors: [
            {
              path: 'body/notifications/1/recipient/phone',
              message: 'must be an E.164 phone number: + and 7 to 15 digits, such as +15550101234',
            },
          ],
        },
      },
    ],
  },
);

/** Each batch request's item verdicts, from its body's reading (batchBodyParser) to its handler. */
const verdictsOf = new WeakMap<FastifyRequest, ItemVerdict[]>();

/**
 * The JSON parser of POST /notifications/batch: the body's bytes go to a batch thread, which
 * parses them and checks every item (batch-decoder.ts), and the request's body becomes the
 * outline the thread sends back (batch-body.ts), for the route's schema to check as it would
 * the body itself. Fastify's own parser would parse the whole body on the event loop. Answers
 * as Fastify's parser does: empty, not JSON, a __proto__ key.
 */
function batchBodyParser(deps: IngestRouteDeps) {
  const pushAllowedHosts = deps.config.providers.pushAllowedHosts ?? [];
  return async (request: FastifyRequest, payload: IncomingMessage) => {
    const { tenant } = request.principal;
    const bytes = await readBytes(payload, deps.config.batchBodyLimit);
    const decoded = await deps.batchDecoder.decode(
      tenant,
      bytes,
      deps.clock.now(),
      pushAllowedHosts,
      await deps.recipientDigests.tenantKey(tenant),
    );
    if (!decoded.ok) {
      throw malformedBody(decoded.malformed);
    }
    if (decoded.verdicts) verdictsOf.set(request, decoded.verdicts);
    return decoded.outline;
  };
}

type IngestRouteDeps = {
  config: Config;
  clock: Clock;
  ingest: Ingest;
  batchDecoder: BatchDecoder;
  recipientDigests: RecipientDigests;
  quotas: QuotaGate;
};

/** POST /notifications and POST /notifications/batch: durable acceptance (scope notifications:send). */
export const notificationIngestRoutes: RouteModule<IngestRouteDeps> = async (app, deps) => {
  const { ingest } = deps;

  app.post(
    '/notifications',
    {
      // Each item is checked for U+0000 by validate.ts, so a batch can answer 207 per item.
      config: { scope: 'notifications:send', checksNulInBody: true },
      schema: {
        tags: ['notifications'],
        summary: 'Accept one notification; 201 only after it is durably committed',
        description:
          'Scope notifications:send. The body names a channel (email, sms, push or inapp), a recipient of that channel (on inapp always `{ id }`), and either a `template` (its current version is pinned now, rendered with `variables` when the notification is processed) or inline `content`; `priority` (CRITICAL, HIGH, NORMAL by default, LOW), `locale` (a BCP 47 tag: the closest locale variant of the template renders), `scheduledAt`, `expiresAt` and `metadata` are optional. The answer 201 comes only once the notification is durably committed, with its ID and a Location. With an `Idempotency-Key` header, the same key and body within 24 hours answer 200 with the same ID; the same key with another body is 409. Follow the notification with GET /notifications/{id}, the live stream or a status callback.',
        body: NotificationBody,
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
        response: { 200: Accepted, 201: Accepted },
      },
      // The schema above documents the body; validateNotification checks it, one compiled schema
      // per channel, with readable errors (ajv's errors for a union are not).
      validatorCompiler: ({ httpPart }) =>
        httpPart === 'body' ? (data: unknown) => ({ value: data }) : () => true,
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      const result = await ingest.accept(
        request.principal.tenant,
        request.body,
        Array.isArray(key) ? key[0] : key,
        requestSpan(request),
      );
      return reply
        .code(result.status)
        .headers(deps.quotas.headers(request.principal.tenant, result.body.channel))
        .header('location', `/notifications/${result.body.notificationId}`)
        .send(result.body);
    },
  );

  // Its own scope: the batch body's parser is this route's alone.
  await app.register(async (scope: App) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', batchBodyParser(deps));
    batchRoute(scope, deps);
  });
};

function batchRoute(app: App, { config, ingest, quotas }: IngestRouteDeps): void {
  app.post(
    '/notifications/batch',
    {
      // Each item is checked for U+0000 by validate.ts, so a batch can answer 207 per item.
      config: { scope: 'notifications:send', checksNulInBody: true },
      bodyLimit: config.batchBodyLimit,
      schema: {
        tags: ['notifications'],
        summary: 'Accept up to 1000 notifications, each on its own; one commit for the batch',
        description:
          'Scope notifications:send. Each item is a POST /notifications body, checked on its own: the answer 207 has one result per item, in order, with its notificationId or its problem, and a bad item never refuses the others.',
        body: BatchBody,
        response: { 207: BatchResults },
      },
    },
    async (request, reply) => {
      // The schema took the outline, so the thread checked every item (batch-body.ts).
      const verdicts = verdictsOf.get(request);
      if (!verdicts) throw new Error('a batch the schema took has no item verdicts');
      const { tenant } = request.principal;
      const results = await ingest.acceptBatch(tenant, verdicts, requestSpan(request));
      // Items past a quota share one problem: its Retry-After and RateLimit fields answer the batch.
      const limited = results.find((r) => 'error' in r && r.error.code === 'RATE_LIMITED');
      reply.headers(limited && 'error' in limited ? headersOf(limited.error) : quotas.headers(tenant));
      return reply.code(207).send({
        results: results.map((r) => ('error' in r ? { index: r.index, error: problemOf(r.error) } : r)),
      });
    },
  );
}
