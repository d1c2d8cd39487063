import { Type } from '@sinclair/typebox';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { exampleOf, withExample } from '../http/examples.ts';
import { PageSchema, pageOf, textCursor } from '../http/page.ts';
import type { RouteModule } from '../http/types.ts';
import { RECIPIENT_ID } from './model.ts';
import { RecipientIdText } from './schemas.ts';
import {
  MAX_SUBSCRIBE,
  SubscriberView,
  subscriberView,
  TOPIC_KEY,
  TopicKey,
  TopicView,
  topicView,
} from './topics.ts';

const KeyParam = Type.Object({ key: withExample(TopicKey, 'release-notes') });
const MemberParams = Type.Object({
  key: withExample(TopicKey, 'release-notes'),
  recipientId: withExample(RecipientIdText, 'user-42'),
});
const PutBody = withExample(
  Type.Object(
    { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
    { additionalProperties: false },
  ),
  { name: 'Release notes' },
);
const SubscribeBody = withExample(
  Type.Object(
    { recipients: Type.Array(RecipientIdText, { minItems: 1, maxItems: MAX_SUBSCRIBE }) },
    { additionalProperties: false },
  ),
  { recipients: ['user-42', 'user-43', 'nobody'] },
);
const Subscribed = withExample(
  Type.Object({
    added: Type.Integer({
      description: 'How many became subscribers (one already subscribed is not counted)',
    }),
    refused: Type.Array(
      Type.Object({ recipientId: Type.String(), code: Type.Literal('RECIPIENT_NOT_FOUND') }),
    ),
  }),
  { added: 2, refused: [{ recipientId: 'nobody', code: 'RECIPIENT_NOT_FOUND' }] },
);
const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 400 })),
  },
  { additionalProperties: false },
);

const TopicPage = withExample(PageSchema(TopicView), { items: [exampleOf(TopicView)], nextCursor: null });
const SubscriberPage = withExample(PageSchema(SubscriberView), {
  items: [{ recipientId: 'user-42', subscribedAt: '2026-11-28T09:00:00.000Z' }],
  nextCursor: 'dHM6dXNlci00Mg',
});

const topicCursor = textCursor('tp', TOPIC_KEY);
const memberCursor = textCursor('ts', RECIPIENT_ID);
const noTopic = (key: string) => new HeraldError('NOT_FOUND', `No topic "${key}".`);

/**
 * /topics (docs/topics.md): a tenant's topics and their subscribers, scope recipients:write to change
 * them and recipients:read to read them. Subscribers are added in batches of up to 1000, one
 * statement a batch; the count is kept with the memberships (docs/topics.md).
 */
export const topicRoutes: RouteModule<CoreDeps> = (app, deps) => {
  const { store, clock } = deps;
  const read = { config: { scope: 'recipients:read' } };
  const write = { config: { scope: 'recipients:write' } };
  const tags = ['topics'];

  app.put(
    '/topics/:key',
    {
      ...write,
      schema: {
        tags,
        summary: 'Create a topic, or rename it',
        description:
          'Scope recipients:write. 201 when the topic is new, 200 when it existed (its subscribers are kept).',
        params: KeyParam,
        body: PutBody,
        response: { 200: TopicView, 201: TopicView },
      },
    },
    async (request, reply) => {
      const { key } = request.params;
      const name = request.body?.name ?? null;
      const { record, created } = await store.topics.put(request.principal.tenant, key, name, clock.now());
      if (created) reply.code(201).header('location', `/topics/${key}`);
      return topicView(record);
    },
  );

  app.get(
    '/topics',
    {
      ...read,
      schema: {
        tags,
        summary: "The tenant's topics by key",
        description: 'Scope recipients:read. Follow `nextCursor` until it is null.',
        querystring: ListQuery,
        response: { 200: TopicPage },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 50;
      const after = topicCursor.decode(request.query.cursor);
      const rows = await store.topics.list(request.principal.tenant, { limit: limit + 1, after });
      const { page, nextCursor } = pageOf(rows, limit, topicCursor, (t) => t.key);
      return { items: page.map(topicView), nextCursor };
    },
  );

  app.get(
    '/topics/:key',
    {
      ...read,
      schema: {
        tags,
        summary: 'One topic and its subscriber count',
        description: "Scope recipients:read. Another tenant's topic is 404.",
        params: KeyParam,
        response: { 200: TopicView },
      },
    },
    async (request) => {
      const topic = await store.topics.get(request.principal.tenant, request.params.key);
      if (!topic) throw noTopic(request.params.key);
      return topicView(topic);
    },
  );

  app.delete(
    '/topics/:key',
    {
      ...write,
      schema: {
        tags,
        summary: 'Delete a topic and its memberships',
        description:
          'Scope recipients:write. The recipients stay; a broadcast already fanning out to it goes on with its snapshot.',
        params: KeyParam,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const removed = await store.topics.remove(request.principal.tenant, request.params.key);
      if (!removed) throw noTopic(request.params.key);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/topics/:key/subscribers',
    {
      ...write,
      schema: {
        tags,
        summary: 'Subscribe up to 1000 recipients',
        description:
          'Scope recipients:write. One statement for the batch. `added` counts the new subscribers; an ID that names no recipient of the tenant is refused in `refused` (RECIPIENT_NOT_FOUND) and the others are still added. 404 for an unknown topic.',
        params: KeyParam,
        body: SubscribeBody,
        response: { 200: Subscribed },
      },
    },
    async (request) => {
      const { key } = request.params;
      const result = await store.topics.subscribe(
        request.principal.tenant,
        key,
        request.body.recipients,
        clock.now(),
      );
      if (!result) throw noTopic(key);
      return {
        added: result.added,
        refused: result.unknown.map((recipientId) => ({ recipientId, code: 'RECIPIENT_NOT_FOUND' as const })),
      };
    },
  );

  app.delete(
    '/topics/:key/subscribers/:recipientId',
    {
      ...write,
      schema: {
        tags,
        summary: 'Unsubscribe a recipient',
        description: 'Scope recipients:write. 404 for an unknown topic or a recipient not subscribed to it.',
        params: MemberParams,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const { key, recipientId } = request.params;
      const outcome = await store.topics.unsubscribe(request.principal.tenant, key, recipientId);
      if (outcome === 'topic') throw noTopic(key);
      if (outcome === 'member') {
        throw new HeraldError('NOT_FOUND', `"${recipientId}" is not subscribed to "${key}".`);
      }
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/topics/:key/subscribers',
    {
      ...read,
      schema: {
        tags,
        summary: "A topic's subscribers by recipientId",
        description: 'Scope recipients:read. Follow `nextCursor` until it is null. 404 for an unknown topic.',
        params: KeyParam,
        querystring: ListQuery,
        response: { 200: SubscriberPage },
      },
    },
    async (request) => {
      const { key } = request.params;
      const limit = request.query.limit ?? 50;
      const after = memberCursor.decode(request.query.cursor);
      const rows = await store.topics.subscribers(request.principal.tenant, key, { limit: limit + 1, after });
      if (!rows) throw noTopic(key);
      const { page, nextCursor } = pageOf(rows, limit, memberCursor, (s) => s.recipientId);
      return { items: page.map(subscriberView), nextCursor };
    },
  );
};
