import type { CoreDeps } from '../deps.ts';
import { type FieldError, HeraldError } from '../errors.ts';
import { problemOf } from '../http/problem.ts';
import type { App } from '../http/types.ts';
import { schemaErrors } from '../notifications/validate.ts';
import { RECIPIENT_BATCH_BODY_LIMIT } from './model.ts';
import { checkEntry, invalidRecipient, type RecipientEntry } from './profile.ts';
import { BatchBody, BatchResults, batchOutline } from './schemas.ts';

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

/**
 * POST /recipients/batch (docs/recipients.md): up to 1000 recipients, each a full replacement checked on
 * its own; the valid ones are written in one transaction, and the answer 207 says per item
 * whether it was created (201), replaced (200) or refused (its problem).
 */
export function recipientBatchRoute(
  app: App,
  deps: CoreDeps & { pushAllowedHosts: readonly string[] },
): void {
  const { store, clock, pushAllowedHosts } = deps;
  app.post(
    '/recipients/batch',
    {
      // Each item is checked for U+0000 by profile.ts, so that only that item is refused.
      config: { scope: 'recipients:write', checksNulInBody: true },
      bodyLimit: RECIPIENT_BATCH_BODY_LIMIT,
      // The outline is checked below, then each item on its own, as a PUT is.
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
      const body: unknown = request.body;
      if (!batchOutline.Check(body)) {
        const errors: FieldError[] = [];
        schemaErrors(batchOutline, body, 'body', errors);
        throw new HeraldError('VALIDATION_FAILED', 'The batch does not match the schema.', { errors });
      }
      const results: BatchResult[] = [];
      const entries: RecipientEntry[] = [];
      const positions: number[] = [];
      body.recipients.forEach((item, index) => {
        const entry = checkEntry(item, `body/recipients/${index}`, pushAllowedHosts);
        if (Array.isArray(entry)) {
          results[index] = { index, error: problemOf(invalidRecipient(entry)) };
        } else {
          entries.push(entry);
          positions.push(index);
        }
      });
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
