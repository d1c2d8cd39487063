import { Type } from '@sinclair/typebox';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { exampleOf, withExample } from '../http/examples.ts';
import { PageSchema, pageOf, textCursor } from '../http/page.ts';
import { nullable } from '../http/schema.ts';
import type { RouteModule } from '../http/types.ts';
import { CATEGORY_NAME, type CategoryRecord } from './model.ts';
import { CategoryName, ChannelChoices, StrictBoolean } from './preference-schemas.ts';
import { WHOLE_CHANNEL } from './preferences-form.ts';

/** Most characters of a category's description (shown on the preferences page). */
const DESCRIPTION_MAX = 500;

const strict = { additionalProperties: false } as const;

const CategoryBody = withExample(
  Type.Object(
    {
      description: Type.Optional(
        Type.String({
          maxLength: DESCRIPTION_MAX,
          description: 'Shown to recipients on their preferences page, under the category name',
        }),
      ),
      required: Type.Optional(
        StrictBoolean({
          description: 'Sent whatever the preferences say (security, billing); false by default',
        }),
      ),
      defaultChannels: Type.Optional({
        ...ChannelChoices,
        description: 'The choice of a recipient who made none (for this category or the channel as a whole)',
      }),
    },
    strict,
  ),
  { description: 'Offers and product news', defaultChannels: { sms: false } },
);

const CategoryView = withExample(
  Type.Object({
    name: Type.String(),
    description: nullable(Type.String()),
    required: Type.Boolean(),
    defaultChannels: ChannelChoices,
  }),
  {
    name: 'marketing',
    description: 'Offers and product news',
    required: false,
    defaultChannels: { sms: false },
  },
);

const NameParams = Type.Object({ name: withExample(CategoryName, 'marketing') });
const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  strict,
);

const cursor = textCursor('k', CATEGORY_NAME);
const view = (c: CategoryRecord) => ({
  name: c.name,
  description: c.description,
  required: c.required,
  defaultChannels: c.defaultChannels,
});

/**
 * /categories (docs/preferences.md): a tenant's declared categories, their defaults per channel and
 * whether they ignore opt-outs. Declaring and deleting need `admin`; listing `recipients:read`.
 */
export const categoryRoutes: RouteModule<CoreDeps> = (app, deps) => {
  const { store, clock } = deps;

  app.put(
    '/categories/:name',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['preferences'],
        summary: 'Declare a category, or replace it',
        description: `Scope admin. 201 when it is new, 200 when it replaced one; fields left out are reset (no description, not required, no defaults). The name \`${WHOLE_CHANNEL}\` is taken: the preferences page names its boxes for a channel as a whole \`${WHOLE_CHANNEL}.<channel>\`.`,
        params: NameParams,
        body: CategoryBody,
        response: { 200: CategoryView, 201: CategoryView },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      if (name === WHOLE_CHANNEL) {
        throw new HeraldError('VALIDATION_FAILED', `The category name "${WHOLE_CHANNEL}" is taken.`, {
          errors: [
            {
              path: 'params/name',
              message: `must NOT be ${WHOLE_CHANNEL} (the preferences page's boxes for a channel as a whole)`,
            },
          ],
        });
      }
      const { record, created } = await store.categories.put(
        request.principal.tenant,
        name,
        {
          description: request.body.description ?? null,
          required: request.body.required ?? false,
          defaultChannels: request.body.defaultChannels ?? {},
        },
        clock.now(),
      );
      return reply.code(created ? 201 : 200).send(view(record));
    },
  );

  app.get(
    '/categories',
    {
      config: { scope: 'recipients:read' },
      schema: {
        tags: ['preferences'],
        summary: "The tenant's categories, by name",
        description:
          'Scope recipients:read. Every category the tenant declared, in name order; follow `nextCursor` until it is null.',
        querystring: ListQuery,
        response: {
          200: withExample(PageSchema(CategoryView), { items: [exampleOf(CategoryView)], nextCursor: null }),
        },
      },
    },
    async (request) => {
      const { limit = 50 } = request.query;
      const rows = await store.categories.list(request.principal.tenant, {
        limit: limit + 1,
        after: cursor.decode(request.query.cursor),
      });
      const { page, nextCursor } = pageOf(rows, limit, cursor, (c) => c.name);
      return { items: page.map(view), nextCursor };
    },
  );

  app.delete(
    '/categories/:name',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['preferences'],
        summary: 'Delete a category',
        description:
          "Scope admin. Recipients' choices for it stay (they apply again if it is declared again); notifications may still name it, as an undeclared category: no defaults, not required.",
        params: NameParams,
        response: { 204: { description: 'Deleted', type: 'null' } },
      },
    },
    async (request, reply) => {
      if (!(await store.categories.remove(request.principal.tenant, request.params.name))) {
        throw new HeraldError('NOT_FOUND', 'There is no such category.');
      }
      return reply.code(204).send(null);
    },
  );
};
