import { Type } from '@sinclair/typebox';
import { TENANT_NAME } from '../auth/principal.ts';
import { CHANNELS } from '../channels.ts';
import { HeraldError } from '../errors.ts';
import { exampleOf, withExample } from '../http/examples.ts';
import type { RouteModule } from '../http/types.ts';
import type { QuotaGate } from './gate.ts';
import { normalLimits, QuotaBody, quotaProblems } from './model.ts';

const LimitView = Type.Object({
  ratePerSecond: Type.Optional(Type.Integer()),
  burst: Type.Optional(Type.Integer()),
  perDay: Type.Optional(Type.Integer()),
  usedToday: Type.Integer({ description: 'Acceptances counted today (UTC)' }),
});
const QuotaView = withExample(
  Type.Object({
    tenant: Type.String(),
    day: Type.String({ description: 'The UTC day usedToday counts' }),
    updatedAt: Type.String({ format: 'date-time' }),
    total: LimitView,
    channels: Type.Object(Object.fromEntries(CHANNELS.map((c) => [c, Type.Optional(LimitView)]))),
  }),
  {
    tenant: 'acme',
    day: '2026-11-29',
    updatedAt: '2026-11-29T07:00:00.000Z',
    total: { ratePerSecond: 100, burst: 200, perDay: 100000, usedToday: 4210 },
    channels: { sms: { ratePerSecond: 10, burst: 10, perDay: 5000, usedToday: 320 } },
  },
);
const QuotaList = withExample(Type.Object({ items: Type.Array(QuotaView) }), {
  items: [exampleOf(QuotaView)],
});
const TenantParams = Type.Object({
  tenant: Type.String({ pattern: TENANT_NAME.source, examples: ['acme'] }),
});
const Body = withExample(QuotaBody, {
  total: { ratePerSecond: 100, burst: 200, perDay: 100000 },
  channels: { sms: { ratePerSecond: 10, perDay: 5000 } },
});

// Quotas limit every tenant: only the operator (an admin of tenant `default`) sets or reads them.
const operator = { scope: 'admin', operatorOnly: true };
const tags = ['admin'];
const noQuota = (tenant: string) => new HeraldError('NOT_FOUND', `The tenant ${tenant} has no quota.`);

/** /admin/quotas and /admin/tenants/{tenant}/quotas (docs/quotas.md): operator only. */
export const quotaRoutes: RouteModule<{ quotas: QuotaGate }> = (app, { quotas }) => {
  app.get(
    '/admin/quotas',
    {
      config: operator,
      schema: {
        tags,
        summary: "Every tenant's quota, with today's usage",
        description: 'Admins of tenant `default` only (`403` for others).',
        response: { 200: QuotaList },
      },
    },
    async () => ({ items: await quotas.list() }),
  );

  app.put(
    '/admin/tenants/:tenant/quotas',
    {
      config: operator,
      schema: {
        tags,
        summary:
          "Set a tenant's quota: acceptances per second (a token bucket) and per UTC day, in total and per channel",
        description:
          "Admins of tenant `default` only. Replaces the tenant's whole quota. Each limit sets `ratePerSecond` (with `burst`, by default one second's rate), `perDay`, or both. Past a limit, acceptance (POST /notifications, each item of a batch, POST /broadcasts) answers `429` `RATE_LIMITED` with `Retry-After`; NORMAL and LOW may use only three quarters of each limit, CRITICAL and HIGH all of it. Every process applies a change within a second.",
        params: TenantParams,
        body: Body,
        response: { 200: QuotaView },
      },
    },
    async (request) => {
      const errors = quotaProblems(request.body);
      if (errors.length > 0) throw new HeraldError('VALIDATION_FAILED', 'The quota is invalid.', { errors });
      return quotas.put(request.params.tenant, normalLimits(request.body));
    },
  );

  app.get(
    '/admin/tenants/:tenant/quotas',
    {
      config: operator,
      schema: {
        tags,
        summary: "A tenant's quota and today's usage, in total and per channel",
        description: 'Admins of tenant `default` only. `404` when the tenant has no quota.',
        params: TenantParams,
        response: { 200: QuotaView },
      },
    },
    async (request) => {
      const view = await quotas.view(request.params.tenant);
      if (!view) throw noQuota(request.params.tenant);
      return view;
    },
  );

  app.delete(
    '/admin/tenants/:tenant/quotas',
    {
      config: operator,
      schema: {
        tags,
        summary: "Remove a tenant's quota: its acceptance is no longer limited",
        description: 'Admins of tenant `default` only. `404` when the tenant has no quota.',
        params: TenantParams,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      if (!(await quotas.remove(request.params.tenant))) throw noQuota(request.params.tenant);
      return reply.code(204).send(null);
    },
  );
};
