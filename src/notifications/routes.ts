import { Type } from '@sinclair/typebox';
import type { Config } from '../config/config.ts';
import { exampleOf, withExample } from '../http/examples.ts';
import { problemOf } from '../http/problem.ts';
import type { RouteModule } from '../http/types.ts';
import type { Ingest } from './ingest.ts';
import { Accepted, NOTIFICATION_ID_EXAMPLE, NotificationBody } from './schemas.ts';

const BatchBody = withExample(
  Type.Object(
    { notifications: Type.Array(Type.Unknown(), { minItems: 1, maxItems: 1000 }) },
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
          errors: [{ path: 'body/recipient/phone', message: 'must be an E.164 number' }],
        },
      },
    ],
  },
);

/** POST /notifications and POST /notifications/batch: durable acceptance (scope notifications:send). */
export const notificationIngestRoutes: RouteModule<{ config: Config; ingest: Ingest }> = (app, deps) => {
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
          'Scope notifications:send. The body names a channel (email, sms or push), a recipient of that channel, and either a `template` (its current version is pinned now, rendered with `variables` when the notification is processed) or inline `content`; `priority` (CRITICAL, HIGH, NORMAL by default, LOW), `scheduledAt`, `expiresAt` and `metadata` are optional. The answer 201 comes only once the notification is durably committed, with its ID and a Location. With an `Idempotency-Key` header, the same key and body within 24 hours answer 200 with the same ID; the same key with another body is 409. Follow the notification with GET /notifications/{id}, the live stream or a status callback.',
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
      );
      return reply
        .code(result.status)
        .header('location', `/notifications/${result.body.notificationId}`)
        .send(result.body);
    },
  );

  app.post(
    '/notifications/batch',
    {
      // Each item is checked for U+0000 by validate.ts, so a batch can answer 207 per item.
      config: { scope: 'notifications:send', checksNulInBody: true },
      bodyLimit: deps.config.batchBodyLimit,
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
      const results = await ingest.acceptBatch(request.principal.tenant, request.body.notifications);
      return reply.code(207).send({
        results: results.map((r) => ('error' in r ? { index: r.index, error: problemOf(r.error) } : r)),
      });
    },
  );
};
