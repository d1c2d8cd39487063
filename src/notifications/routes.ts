import { Type } from '@sinclair/typebox';
import type { Config } from '../config/config.ts';
import { problemOf } from '../http/problem.ts';
import type { RouteModule } from '../http/types.ts';
import type { Ingest } from './ingest.ts';
import { Accepted, NotificationBody } from './schemas.ts';

const BatchBody = Type.Object(
  { notifications: Type.Array(Type.Unknown(), { minItems: 1, maxItems: 1000 }) },
  { additionalProperties: false },
);
const BatchResults = Type.Object({
  results: Type.Array(
    Type.Object({
      index: Type.Integer(),
      notificationId: Type.Optional(Type.String()),
      status: Type.Optional(Type.String()),
      error: Type.Optional(Type.Unknown()),
    }),
  ),
});

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
