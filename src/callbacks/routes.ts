import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { sealPrivateKey } from '../auth/key-crypto.ts';
import { iso } from '../clock.ts';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { exampleOf, withExample } from '../http/examples.ts';
import { numericCursor, PageSchema, pageOf } from '../http/page.ts';
import { literals, nullable } from '../http/schema.ts';
import type { RouteModule } from '../http/types.ts';
import { NOTIFICATION_ID_EXAMPLE } from '../notifications/schemas.ts';
import { refusedUrl } from '../providers/outbound.ts';
import type { AttemptRecord, CallbackRecord } from '../store/port/callbacks.ts';
import { CALLBACK_EVENTS, type CallbackEvent, DEFAULT_CALLBACK_EVENTS } from '../store/port/status-log.ts';
import { newSecret } from './signing.ts';

const admin = { scope: 'admin' };
const CALLBACK_ID_EXAMPLE = 'cb_Qm9vbGVhbkNhbGxiYWNr';
const SECRET_EXAMPLE = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const IdParams = Type.Object({ id: Type.String({ maxLength: 100, examples: [CALLBACK_ID_EXAMPLE] }) });

const CreateCallbackBody = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2000,
      description:
        'An https:// receiver; no loopback, private or link-local address unless HERALD_CALLBACK_ALLOWED_HOSTS lists its host',
    }),
    events: Type.Optional(
      Type.Array(literals(CALLBACK_EVENTS), {
        minItems: 1,
        uniqueItems: true,
        description:
          'The statuses to report, for `inapp` messages SEEN, READ, ARCHIVED (what their reader did; the status stays DELIVERED), and `workflow.run` for the status changes of workflow runs (a run status is not an entry); every status and `workflow.run` when absent (the reading events only when listed)',
      }),
    ),
  },
  { additionalProperties: false },
);

const CallbackView = withExample(
  Type.Object({
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(literals(CALLBACK_EVENTS)),
    enabled: Type.Boolean(),
    disabledReason: nullable(Type.String()),
    createdAt: Type.String({ format: 'date-time' }),
  }),
  {
    id: CALLBACK_ID_EXAMPLE,
    url: 'https://hooks.example.com/herald',
    events: ['DELIVERED', 'FAILED'],
    enabled: true,
    disabledReason: null,
    createdAt: '2026-11-28T09:00:00.000Z',
  },
);
const CreatedCallback = withExample(
  Type.Composite([
    CallbackView,
    Type.Object({ secret: Type.String({ description: 'whsec_…: shown only here and on rotation' }) }),
  ]),
  { ...exampleOf(CallbackView), secret: SECRET_EXAMPLE },
);
const RotatedSecret = withExample(Type.Object({ id: Type.String(), secret: Type.String() }), {
  id: CALLBACK_ID_EXAMPLE,
  secret: SECRET_EXAMPLE,
});
const Delivery = Type.Object({
  messageId: Type.String({ description: 'The webhook-id' }),
  notificationId: Type.String(),
  attempt: Type.Integer(),
  statusCode: nullable(Type.Integer()),
  error: nullable(Type.String()),
  at: Type.String({ format: 'date-time' }),
});
const Deliveries = withExample(PageSchema(Delivery), {
  items: [
    {
      messageId: 'msg_2bX9kQ4f7TzL1c0Vn8aE',
      notificationId: NOTIFICATION_ID_EXAMPLE,
      attempt: 2,
      statusCode: 200,
      error: null,
      at: '2026-11-28T09:30:05.120Z',
    },
    {
      messageId: 'msg_2bX9kQ4f7TzL1c0Vn8aE',
      notificationId: NOTIFICATION_ID_EXAMPLE,
      attempt: 1,
      statusCode: 503,
      error: 'the receiver answered 503',
      at: '2026-11-28T09:30:00.020Z',
    },
  ],
  nextCursor: null,
});
const DeliveriesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

const view = (c: CallbackRecord) => ({
  id: c.id,
  url: c.url,
  events: c.events,
  enabled: c.disabledAt === null,
  disabledReason: c.disabledReason,
  createdAt: iso(c.createdAt),
});
const deliveryView = (a: AttemptRecord) => ({
  messageId: a.messageId,
  notificationId: a.notificationId,
  attempt: a.attempt,
  statusCode: a.statusCode,
  error: a.error,
  at: iso(a.at),
});

const notFound = () => new HeraldError('NOT_FOUND', 'No such callback.');
const cursor = numericCursor('a');

/** /callbacks: a tenant's status callbacks (docs/callbacks.md), scope `admin`, always within its tenant. */
export const callbackRoutes: RouteModule<CoreDeps> = (app, deps) => {
  const { store, clock, config } = deps;
  const seal = (secret: string, id: string) => sealPrivateKey(secret, id, config.keyEncryptionSecret);

  app.post(
    '/callbacks',
    {
      config: admin,
      schema: {
        tags: ['callbacks'],
        summary: 'Register a status callback; its signing secret is in this answer only',
        description:
          'A tenant has at most HERALD_CALLBACKS_PER_TENANT callbacks (20); one more gets 409 INVALID_STATE until one is deleted.',
        body: withExample(CreateCallbackBody, {
          url: 'https://hooks.example.com/herald',
          events: ['DELIVERED', 'FAILED'],
        }),
        response: { 201: CreatedCallback },
      },
    },
    async (request, reply) => {
      const refused = refusedUrl(
        request.body.url,
        config.callbackAllowedHosts ?? [],
        'HERALD_CALLBACK_ALLOWED_HOSTS',
      );
      if (refused) {
        throw new HeraldError('VALIDATION_FAILED', `The callback URL ${refused}.`, {
          errors: [{ path: 'body/url', message: refused }],
        });
      }
      const id = `cb_${randomBytes(12).toString('base64url')}`;
      const secret = newSecret();
      const callback: CallbackRecord = {
        id,
        tenant: request.principal.tenant,
        url: request.body.url,
        events: (request.body.events as CallbackEvent[] | undefined) ?? [...DEFAULT_CALLBACK_EVENTS],
        secret: seal(secret, id),
        previousSecret: null,
        rotatedAt: null,
        disabledAt: null,
        disabledReason: null,
        createdAt: clock.now(),
      };
      // It reports the changes after the log's head now: from this answer on, whenever a worker
      // first reads for it (perhaps a worker process not started yet).
      const perTenant = config.callbacksPerTenant;
      if (!(await store.callbacks.create(callback, await store.statusLog.head(), perTenant))) {
        // Every callback costs the shared sender a request per change: a cap keeps one tenant
        // from loading it without bound.
        throw new HeraldError(
          'INVALID_STATE',
          `This tenant already has ${perTenant} callbacks (HERALD_CALLBACKS_PER_TENANT); delete one first.`,
        );
      }
      return reply
        .code(201)
        .header('location', `/callbacks/${id}`)
        .send({ ...view(callback), secret });
    },
  );

  app.get(
    '/callbacks',
    {
      config: admin,
      schema: {
        tags: ['callbacks'],
        summary: "The tenant's status callbacks",
        description:
          "Scope admin. Every callback of the caller's tenant, without its secret; a callback given up on (its receiver answered 410) says why in `disabledReason`.",
        response: {
          200: withExample(Type.Object({ items: Type.Array(CallbackView) }), {
            items: [exampleOf(CallbackView)],
          }),
        },
      },
    },
    async (request) => ({ items: (await store.callbacks.list(request.principal.tenant)).map(view) }),
  );

  app.delete(
    '/callbacks/:id',
    {
      config: admin,
      schema: {
        tags: ['callbacks'],
        summary: 'Remove a callback and its pending messages',
        description: 'Scope admin. No message is sent to it afterwards, retries included.',
        params: IdParams,
        response: { 204: { description: 'Removed', type: 'null' } },
      },
    },
    async (request, reply) => {
      if (!(await store.callbacks.remove(request.principal.tenant, request.params.id))) throw notFound();
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/callbacks/:id/rotate-secret',
    {
      config: admin,
      schema: {
        tags: ['callbacks'],
        summary: 'New signing secret; the old one still signs for 24 hours',
        description:
          'Scope admin. Messages carry a signature by each secret for 24 hours, so a receiver can switch to the new one at its pace. The new secret is in this answer only. Takes no body.',
        params: IdParams,
        response: { 200: RotatedSecret },
      },
    },
    async (request) => {
      const { id } = request.params;
      const secret = newSecret();
      const done = await store.callbacks.rotateSecret(
        request.principal.tenant,
        id,
        seal(secret, id),
        clock.now(),
      );
      if (!done) throw notFound();
      return { id, secret };
    },
  );

  app.get(
    '/callbacks/:id/deliveries',
    {
      config: admin,
      schema: {
        tags: ['callbacks'],
        summary: 'Recent attempts, newest first',
        description:
          "Scope admin. Each attempt to post a message to this callback: its webhook-id, the notification, the receiver's status code or the error. Follow `nextCursor` until it is null.",
        params: IdParams,
        querystring: DeliveriesQuery,
        response: { 200: Deliveries },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 50;
      const rows = await store.callbacks.deliveries(
        request.principal.tenant,
        request.params.id,
        cursor.decode(request.query.cursor),
        limit + 1,
      );
      if (!rows) throw notFound();
      const { page, nextCursor } = pageOf(rows, limit, cursor, (a) => a.seq);
      return { items: page.map(deliveryView), nextCursor };
    },
  );
};
