import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { problemOf } from '../http/problem.ts';
import type { App } from '../http/types.ts';
import { malformedBody, readBytes } from '../notifications/batch-bytes.ts';
import type { BatchDecoder } from '../notifications/batch-decoder.ts';
import type { DecodedRecipientBatch } from './batch-body.ts';
import { RECIPIENT_BATCH_BODY_LIMIT } from './model.ts';
import { invalidRecipient, type RecipientEntry } from './profile.ts';
import { BatchBody, BatchResults } from './schemas.ts';

/**
 * Route options for a body documented by the route's schema but checked by the handler with
 * profile.ts (null fields, each push target by its form, locale, time zone, data size), not by
 * ajv, whose type coercion and union errors a profile does not want. Parameters, likewise.
 */
export const checkedByHandler = {
  validatorCompiler: ({ httpPart }: { httpPart?: string }) =>
    httpPart === 'body' ? (data: unknown) => ({ value: data }) : () => true,
};

type BatchResult =
  | { index: number; recipientId: string; status: 200 | 201 }
  | { index: number; error: ReturnType<typeof problemOf> };

type BatchDeps = CoreDeps & { pushAllowedHosts: readonly string[]; batchDecoder: BatchDecoder };

/** Each batch request's reading, from its body's parser to its handler. */
const decodedOf = new WeakMap<FastifyRequest, DecodedRecipientBatch & { ok: true }>();

/**
 * The JSON parser of POST /recipients/batch: the body's bytes go to a batch thread, which parses
 * the body and checks it and every item (recipients/batch-body.ts), as for POST
 * /notifications/batch (decision record 0010): a 7 MiB body parsed and checked here held the
 * event loop of every tenant's requests for hundreds of milliseconds. Answers as Fastify's
 * parser does: empty, not JSON, a __proto__ key. The request's body becomes nothing the handler reads.
 */
function recipientBatchParser({ batchDecoder, pushAllowedHosts }: BatchDeps) {
  return async (request: FastifyRequest, payload: IncomingMessage) => {
    const bytes = await readBytes(payload, RECIPIENT_BATCH_BODY_LIMIT);
    const decoded = await batchDecoder.decodeRecipients(request.principal.tenant, bytes, pushAllowedHosts);
    if (!decoded.ok) {
      throw malformedBody(decoded.malformed);
    }
    decodedOf.set(request, decoded);
    return {};
  };
}

/**
 * POST /recipients/batch (docs/recipients.md): up to 1000 recipients, each a full replacement checked on
 * its own; the valid ones are written in one transaction, and the answer 207 says per item
 * whether it was created (201), replaced (200) or refused (its problem). The body is read and
 * checked in a batch thread (recipientBatchParser); this scope's JSON parser is the route's alone.
 */
export async function recipientBatchRoute(app: App, deps: BatchDeps): Promise<void> {
  await app.register(async (scope: App) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', recipientBatchParser(deps));
    batchRoute(scope, deps);
  });
}

function batchRoute(app: App, { store, clock }: BatchDeps): void {
  app.post(
    '/recipients/batch',
    {
      // Each item is checked for U+0000 by profile.ts, so that only that item is refused.
      config: { scope: 'recipients:write', checksNulInBody: true },
      bodyLimit: RECIPIENT_BATCH_BODY_LIMIT,
      // The batch thread checked the outline, then each item on its own, as a PUT is.
      ...checkedByHandler,
      schema: {
        tags: ['recipients'],
        summary: 'Create or replace up to 1000 recipients, each on its own; one commit for the batch',
        description:
          'Scope recipients:write. Each item is `{ recipientId, ...profile }`, a full replacement checked as a PUT is; bodies up to 10 MiB. The answer 207 has one result per item, in order: its `recipientId` and `status` 201 (created) or 200 (replaced), or its problem; a bad item never refuses the others. An ID given twice keeps its last profile.',
        body: BatchBody,
        response: { 207: BatchResults },
      },
    },
    async (request, reply) => {
      // No body, or none announced as JSON: the parser never ran.
      const decoded = decodedOf.get(request);
      if (!decoded) {
        throw new HeraldError('VALIDATION_FAILED', 'The batch does not match the schema.', {
          errors: [{ path: 'body', message: 'must be object' }],
        });
      }
      if ('errors' in decoded) {
        throw new HeraldError('VALIDATION_FAILED', 'The batch does not match the schema.', {
          errors: decoded.errors,
        });
      }
      const { entries, positions } = decoded;
      const results: BatchResult[] = [];
      for (const { index, errors } of decoded.refused) {
        results[index] = { index, error: problemOf(invalidRecipient(errors)) };
      }
      const created =
        entries.length === 0
          ? []
          : await store.recipients.write(request.principal.tenant, entries, clock.now());
      created.forEach((isNew, k) => {
        const index = positions[k] as number;
        results[index] = { index, recipientId: (entries[k] as RecipientEntry).id, status: isNew ? 201 : 200 };
      });
      return reply.code(207).send({ results });
    },
  );
}
