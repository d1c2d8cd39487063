import { type Static, Type } from '@sinclair/typebox';
import { iso } from '../clock.ts';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { fieldMessage } from '../http/field-messages.ts';
import { pageOf, textCursor } from '../http/page.ts';
import type { RouteModule } from '../http/types.ts';
import type { SyntaxCheck } from '../templates/syntax-check.ts';
import { WORKFLOW_KEY, type WorkflowRecord } from './model.ts';
import { WorkflowBody, WorkflowKey, WorkflowList, WorkflowView } from './schemas.ts';
import { checkDefinition } from './validate.ts';

const KeyParam = Type.Object({ key: WorkflowKey });
const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

/** A workflow as the API shows it: its current (or a run's) version, times in ISO 8601. */
export function workflowView(w: WorkflowRecord) {
  return {
    key: w.key,
    name: w.name,
    category: w.category,
    version: w.version,
    // Checked at save against the documented shape, which types each send's content by its channel.
    steps: w.steps as Static<typeof WorkflowView>['steps'],
    createdAt: iso(w.createdAt),
    updatedAt: iso(w.updatedAt),
  };
}

const cursor = textCursor('w', WORKFLOW_KEY);
const notFound = (key: string) => new HeraldError('NOT_FOUND', `No workflow "${key}".`);

/**
 * Workflow definitions (docs/workflows.md): PUT saves a version, GET reads the
 * current ones, DELETE removes the key (its versions stay for runs). Scopes as templates'.
 */
export const workflowRoutes: RouteModule<CoreDeps & { syntax: SyntaxCheck }> = (app, deps) => {
  const { store, clock } = deps;
  const read = { config: { scope: 'templates:read' } };
  const write = { config: { scope: 'templates:write' } };
  const tags = ['workflows'];

  app.put(
    '/workflows/:key',
    {
      ...write,
      schema: {
        tags,
        summary: 'Save a workflow: 201 for a new key, else 200 with a new version',
        description:
          "Scope templates:write. `steps` run in order (1 to 20): `send` (a channel and a `template` of that channel or inline `content`, checked as a notification's; `if`: `not_read`, `not_delivered` or `failed`), `delay` (`for`), `digest` (`for`, `key`?) and `throttle` (`limit`, `for`, `key`?); durations are ISO 8601, at most 30 days. Every save is a new version; runs keep the version they started with. A broken rule is 400 naming the step and field (`body/steps/2/for`), every error at once, and nothing is saved.",
        params: KeyParam,
        body: WorkflowBody,
        response: { 200: WorkflowView, 201: WorkflowView },
      },
      // The schema above documents the body; checkDefinition checks it step by step, with the
      // notification's rules for a send, and errors that name the step (a union's do not). This
      // compiler is the route's for every part, so the handler checks the key.
      validatorCompiler: ({ httpPart }) =>
        httpPart === 'body' ? (data: unknown) => ({ value: data }) : () => true,
    },
    async (request, reply) => {
      const { tenant } = request.principal;
      const { key } = request.params;
      if (!WORKFLOW_KEY.test(key)) {
        throw new HeraldError('VALIDATION_FAILED', `"${key}" is not a workflow key.`, {
          errors: [
            {
              path: 'params/key',
              message: fieldMessage({ keyword: 'pattern', params: { pattern: WORKFLOW_KEY.source } }),
            },
          ],
        });
      }
      const definition = await checkDefinition(tenant, request.body, deps);
      const { workflow, created } = await store.workflows.put(tenant, key, definition, clock.now());
      if (created) reply.code(201).header('location', `/workflows/${workflow.key}`);
      return workflowView(workflow);
    },
  );

  app.get(
    '/workflows',
    {
      ...read,
      schema: {
        tags,
        summary: 'List workflows by key',
        description:
          "Scope templates:read. The current version of each of the tenant's workflows, by key; follow `nextCursor` until it is null.",
        querystring: ListQuery,
        response: { 200: WorkflowList },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 50;
      const after = cursor.decode(request.query.cursor);
      const rows = await store.workflows.list(request.principal.tenant, {
        limit: limit + 1,
        ...(after === undefined ? {} : { cursor: after }),
      });
      const { page, nextCursor } = pageOf(rows, limit, cursor, (w) => w.key);
      return { items: page.map(workflowView), nextCursor };
    },
  );

  app.get(
    '/workflows/:key',
    {
      ...read,
      schema: {
        tags,
        summary: "A workflow's current version",
        description: 'Scope templates:read. 404 for a key the tenant has no workflow of.',
        params: KeyParam,
        response: { 200: WorkflowView },
      },
    },
    async (request) => {
      const found = await store.workflows.get(request.principal.tenant, request.params.key);
      if (!found) throw notFound(request.params.key);
      return workflowView(found);
    },
  );

  app.delete(
    '/workflows/:key',
    {
      ...write,
      schema: {
        tags,
        summary: 'Delete a workflow',
        description:
          'Scope templates:write. The key no longer names a workflow; runs already started finish with the version they started with. 404 for a key the tenant has no workflow of.',
        params: KeyParam,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const deleted = await store.workflows.delete(request.principal.tenant, request.params.key);
      if (!deleted) throw notFound(request.params.key);
      return reply.code(204).send(null);
    },
  );
};
