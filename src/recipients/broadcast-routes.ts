import { Type } from '@sinclair/typebox';
import { iso } from '../clock.ts';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { withExample } from '../http/examples.ts';
import { literals } from '../http/schema.ts';
import { requestSpan } from '../http/trace-hooks.ts';
import type { RouteModule } from '../http/types.ts';
import { priorityRank } from '../notifications/model.ts';
import { isUrgent, type WakeSignal } from '../notifications/wakeup.ts';
import type { QuotaGate } from '../quotas/gate.ts';
import { BROADCAST_STATUSES, type BroadcastRecord } from '../store/port/broadcasts.ts';
import type { TemplateRecord } from '../store/port/templates.ts';
import type { SyntaxCheck } from '../templates/syntax-check.ts';
import { traceparentOf } from '../tracing/tracer.ts';
import { newBroadcast, validateBroadcast } from './broadcasts.ts';

const EXAMPLE_ID = '019b76da-a800-70e3-aa1e-88b1e3a76f07';

const BroadcastBody = withExample(
  Type.Object({
    topic: Type.String({ description: 'The key of a topic of your tenant with at least one subscriber' }),
    channel: Type.String({ description: 'email, sms, push or inapp' }),
    priority: Type.Optional(Type.String()),
    template: Type.Optional(Type.String()),
    content: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    variables: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    category: Type.Optional(Type.String()),
    locale: Type.Optional(Type.String()),
    scheduledAt: Type.Optional(Type.String()),
    expiresAt: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  }),
  {
    topic: 'release-notes',
    channel: 'email',
    priority: 'LOW',
    template: 'release-notes',
    variables: { version: '2.4' },
  },
);
const Accepted = withExample(
  Type.Object({
    broadcastId: Type.String(),
    status: Type.Literal('QUEUED'),
    createdAt: Type.String({ format: 'date-time' }),
  }),
  { broadcastId: EXAMPLE_ID, status: 'QUEUED', createdAt: '2026-11-28T09:30:00.000Z' },
);
const BroadcastView = withExample(
  Type.Object({
    broadcastId: Type.String(),
    status: literals(BROADCAST_STATUSES),
    topic: Type.String(),
    recipients: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Subscribers when the fan-out started; null until it starts',
    }),
    created: Type.Integer({ description: 'Notifications made so far' }),
    counts: Type.Record(Type.String(), Type.Integer(), {
      description: 'Its notifications by current status; statuses with none are left out',
    }),
  }),
  {
    broadcastId: EXAMPLE_ID,
    status: 'FANNING_OUT',
    topic: 'release-notes',
    recipients: 120000,
    created: 48000,
    counts: { QUEUED: 40000, DELIVERED: 8000 },
  },
);
const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, examples: [EXAMPLE_ID] }) });

const notFound = (id: string) => new HeraldError('NOT_FOUND', `No broadcast ${id}.`);

/**
 * How long a broadcast's counts are reused while its status stays: two seconds, or ten times as
 * long as their read took when that is longer. Counting reads one index entry per notification (a
 * million for a topic of a million; on SQLite on the API's event loop, in slices with the loop
 * given back between them): once every two seconds per broadcast bounds that work, however many
 * poll. A long read is done at most a tenth of the time: on PostgreSQL, while a broadcast of a
 * million is being made, its entries are too new to be read from the index alone, and a read that
 * visits every row grows with the notifications made (1.4 s on average over a fan-out of a
 * million: a fifth of PostgreSQL's CPU during it, read every two seconds; decision record 0058).
 */
const COUNTS_FRESH_MS = 2000;
const COUNTS_READ_SHARE = 10;
/** Broadcasts whose counts are kept at most (the oldest goes first). */
const COUNTS_KEPT = 256;

type BroadcastRouteDeps = CoreDeps & { wakeup: WakeSignal; syntax: SyntaxCheck; quotas: QuotaGate };

/**
 * /broadcasts (docs/topics.md): one notification to every subscriber of a topic. The 201 comes once
 * the broadcast is stored; the worker fans it out in chunks, durably (recipients/fan-out.ts,
 * docs/topics.md).
 */
export const broadcastRoutes: RouteModule<BroadcastRouteDeps> = (app, deps) => {
  const { store, clock } = deps;
  const pushAllowedHosts = deps.config.providers.pushAllowedHosts ?? [];
  const tags = ['broadcasts'];

  // Reused while the broadcast's status stays and they are fresh; a cancel reads them anew.
  const recent = new Map<
    string,
    { at: number; made: string; freshMs: number; counts: Record<string, number> }
  >();
  const countsOf = async (b: BroadcastRecord, fresh: boolean) => {
    const key = `${b.tenant}\u0000${b.id}`;
    const made = b.status;
    const kept = recent.get(key);
    const now = clock.now();
    if (!fresh && kept?.made === made && now - kept.at < kept.freshMs) return kept.counts;
    const started = performance.now();
    const counts = await store.broadcasts.counts(b.tenant, b.id);
    const freshMs = Math.max(COUNTS_FRESH_MS, (performance.now() - started) * COUNTS_READ_SHARE);
    recent.delete(key);
    recent.set(key, { at: now, made, freshMs, counts });
    if (recent.size > COUNTS_KEPT) recent.delete(recent.keys().next().value as string);
    return counts;
  };
  const view = async (b: BroadcastRecord, fresh = false) => ({
    broadcastId: b.id,
    status: b.status,
    topic: b.topic,
    recipients: b.recipients,
    created: b.created,
    counts: await countsOf(b, fresh),
  });

  app.post(
    '/broadcasts',
    {
      config: { scope: 'notifications:send', checksNulInBody: true },
      schema: {
        tags,
        summary: 'Send one notification to every subscriber of a topic; 201 at once, fanned out after',
        description:
          'Scope notifications:send. The body is a POST /notifications body with `topic` in place of `recipient` (and the optional `category` and `locale`), checked the same way. The 201 comes once the broadcast is stored; every subscriber of the topic when the fan-out starts then gets one notification of its own (`recipient: { id }`, with `broadcastId`), exactly once even across a crash. Follow it with GET /broadcasts/{id}. An unknown topic is 404; a topic with no subscriber is 400.',
        body: BroadcastBody,
        response: { 201: Accepted },
      },
      // validateBroadcast checks the body with the notification's own rules and wording.
      validatorCompiler: ({ httpPart }) =>
        httpPart === 'body' ? (data: unknown) => ({ value: data }) : () => true,
    },
    async (request, reply) => {
      const { tenant } = request.principal;
      const now = clock.now();
      const v = await validateBroadcast(request.body, tenant, now, pushAllowedHosts, deps.syntax);
      const n = v.notification;
      let template: TemplateRecord | null = null;
      if (n.template !== null) {
        template = await store.templates.get(tenant, n.template);
        if (!template || template.channel !== n.channel) {
          throw new HeraldError(
            'TEMPLATE_NOT_FOUND',
            `No ${n.channel} template "${n.template}" exists in your tenant.`,
            {
              errors: [
                { path: 'body/template', message: `must name a ${n.channel} template of your tenant` },
              ],
            },
          );
        }
      }
      const row = newBroadcast(tenant, v, template, now, traceparentOf(requestSpan(request)));
      // A broadcast counts as one acceptance of its channel and priority (docs/quotas.md): its
      // subscribers are known only when the fan-out starts, after this answer.
      const { refusal } = await deps.quotas.admit(tenant, [
        { channel: n.channel, rank: priorityRank(n.priority) },
      ]);
      if (refusal) throw refusal;
      const outcome = await store.broadcasts.create(row);
      if (outcome === 'topic') throw new HeraldError('NOT_FOUND', `No topic "${v.topic}".`);
      if (outcome === 'empty') {
        throw new HeraldError('VALIDATION_FAILED', `The topic "${v.topic}" has no subscribers.`, {
          errors: [{ path: 'body/topic', message: 'must have at least one subscriber' }],
        });
      }
      // The fan-out runs in the worker; a CRITICAL or HIGH one is claimed in its urgent lane.
      deps.wakeup.notify(isUrgent(n.priority));
      return reply
        .code(201)
        .headers(deps.quotas.headers(tenant, n.channel))
        .header('location', `/broadcasts/${row.id}`)
        .send({ broadcastId: row.id, status: 'QUEUED' as const, createdAt: iso(now) });
    },
  );

  app.get(
    '/broadcasts/:id',
    {
      config: { scope: 'notifications:read' },
      schema: {
        tags,
        summary: "A broadcast's progress and its notifications' counts by status",
        description:
          "Scope notifications:read. `created` grows as the fan-out goes; `counts` counts its notifications by their current status, read through their index and reused for a second (a broadcast of a million is a read of a million index entries). Another tenant's broadcast is 404.",
        params: IdParam,
        response: { 200: BroadcastView },
      },
    },
    async (request) => {
      const found = await store.broadcasts.get(request.principal.tenant, request.params.id);
      if (!found) throw notFound(request.params.id);
      return view(found);
    },
  );

  app.post(
    '/broadcasts/:id/cancel',
    {
      config: { scope: 'notifications:send' },
      schema: {
        tags,
        summary: 'Cancel what has not been sent',
        description:
          'Scope notifications:send. The fan-out stops, and its notifications still waiting (QUEUED or RETRYING) are cancelled in chunks right after; those being sent or sent stay as they are. Answers the broadcast, now CANCELLED.',
        params: IdParam,
        response: { 200: BroadcastView },
      },
    },
    async (request) => {
      const cancelled = await store.broadcasts.cancel(
        request.principal.tenant,
        request.params.id,
        clock.now(),
      );
      if (!cancelled) throw notFound(request.params.id);
      deps.wakeup.notify();
      return view(cancelled, true);
    },
  );
};
