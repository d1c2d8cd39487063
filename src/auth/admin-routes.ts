import { Type } from '@sinclair/typebox';
import { iso } from '../clock.ts';
import { HeraldError } from '../errors.ts';
import type { RouteModule } from '../http/types.ts';
import { type ClientRecord, DuplicateError, type UserRecord } from '../store/port/auth.ts';
import { createClient, createUser, disableUser, rotateClientSecret } from './accounts.ts';
import { principalTurn } from './argon2-gate.ts';
import { refuseWeakPassword } from './passwords.ts';
import { isOperator, type Principal } from './principal.ts';
import { ClientView, CreateClientBody, CreateUserBody, TenantQuery, UserView } from './schemas.ts';
import type { AuthDeps } from './service.ts';

/**
 * The tenant an admin acts on: its own by default. Admins of `default` may name any tenant (a
 * new name creates it); others get 403 for a tenant not their own.
 */
function targetTenant(principal: Principal, requested: string | undefined): string {
  const tenant = requested ?? principal.tenant;
  if (tenant !== principal.tenant && !isOperator(principal)) {
    throw new HeraldError('FORBIDDEN', 'Only admins of tenant "default" may manage other tenants.');
  }
  return tenant;
}

/** What a listing shows: everything for `default` admins (or the tenant they name), else their own. */
function listTenant(principal: Principal, requested: string | undefined): string | undefined {
  if (isOperator(principal)) return requested;
  return targetTenant(principal, requested);
}

const userView = (u: UserRecord) => ({
  id: u.id,
  email: u.email,
  role: u.role,
  tenant: u.tenant,
  disabled: u.disabled,
  createdAt: iso(u.createdAt),
});
const clientView = (c: ClientRecord) => ({
  client_id: c.id,
  name: c.name,
  scopes: c.scopes,
  tenant: c.tenant,
  disabled: c.disabled,
  createdAt: iso(c.createdAt),
});

const admin = { scope: 'admin' };
const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

/** /admin/users and /admin/clients (protected, scope `admin`). */
export const adminAccountRoutes: RouteModule<AuthDeps> = (app, deps) => {
  const store = deps.store.auth;

  // Another tenant's user or client answers 404, exactly like an unknown one.
  const visible = (principal: Principal, tenant: string) =>
    isOperator(principal) || tenant === principal.tenant;
  async function visibleUser(principal: Principal, id: string): Promise<UserRecord> {
    const user = await store.findUserById(id);
    if (!user || !visible(principal, user.tenant)) throw new HeraldError('NOT_FOUND', 'No such user.');
    return user;
  }
  async function visibleClient(principal: Principal, id: string): Promise<ClientRecord> {
    const client = await store.findClient(id);
    if (!client || !visible(principal, client.tenant)) throw new HeraldError('NOT_FOUND', 'No such client.');
    return client;
  }

  app.post(
    '/admin/users',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Create a user',
        body: CreateUserBody,
        response: { 201: UserView },
      },
    },
    async (request, reply) => {
      const tenant = targetTenant(request.principal, request.body.tenant);
      refuseWeakPassword(request.body.password, 'body/password');
      try {
        // The argon2 hash is the admin's work, in the admin's tenant (argon2-gate.ts).
        const turn = principalTurn(request.principal);
        const user = await createUser(store, deps.clock, { ...request.body, tenant, turn });
        return reply.code(201).send(userView(user));
      } catch (error) {
        if (error instanceof DuplicateError)
          throw new HeraldError('CONFLICT', 'This tenant has a user with this email.');
        throw error;
      }
    },
  );

  app.get(
    '/admin/users',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'List users',
        querystring: TenantQuery,
        response: { 200: Type.Object({ items: Type.Array(UserView) }) },
      },
    },
    async (request) => ({
      items: (await store.listUsers(listTenant(request.principal, request.query.tenant))).map(userView),
    }),
  );

  app.post(
    '/admin/users/:id/disable',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Disable a user: it can no longer log in or refresh',
        params: IdParams,
        response: { 200: UserView },
      },
    },
    async (request) => {
      const user = await visibleUser(request.principal, request.params.id);
      await disableUser(store, deps.clock, user.id);
      return userView({ ...user, disabled: true });
    },
  );

  app.post(
    '/admin/users/:id/revoke-sessions',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Sign a user out everywhere: every refresh token it holds stops working',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const user = await visibleUser(request.principal, request.params.id);
      await store.revokeSessions(user.id, deps.clock.now());
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/admin/clients',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Create a service client; its secret is shown once',
        body: CreateClientBody,
        response: { 201: Type.Composite([ClientView, Type.Object({ client_secret: Type.String() })]) },
      },
    },
    async (request, reply) => {
      const tenant = targetTenant(request.principal, request.body.tenant);
      const { client, secret } = await createClient(store, deps.clock, deps.auth.clientSecrets, {
        ...request.body,
        tenant,
      });
      // The secret is shown here once; only its keyed digest is stored.
      reply.header('Cache-Control', 'no-store');
      return reply.code(201).send({ ...clientView(client), client_secret: secret });
    },
  );

  app.post(
    '/admin/clients/:id/rotate',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Give a client a new secret; the old one is refused from then on',
        params: IdParams,
        response: { 200: Type.Object({ client_id: Type.String(), client_secret: Type.String() }) },
      },
    },
    async (request, reply) => {
      const client = await visibleClient(request.principal, request.params.id);
      const secret = await rotateClientSecret(store, deps.auth.clientSecrets, client.id);
      reply.header('Cache-Control', 'no-store');
      return { client_id: client.id, client_secret: secret };
    },
  );

  app.post(
    '/admin/clients/:id/disable',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'Disable a client: it gets no more tokens',
        params: IdParams,
        response: { 200: ClientView },
      },
    },
    async (request) => {
      const client = await visibleClient(request.principal, request.params.id);
      await store.setClientDisabled(client.id, true);
      return clientView({ ...client, disabled: true });
    },
  );

  app.get(
    '/admin/clients',
    {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: 'List service clients',
        querystring: TenantQuery,
        response: { 200: Type.Object({ items: Type.Array(ClientView) }) },
      },
    },
    async (request) => ({
      items: (await store.listClients(listTenant(request.principal, request.query.tenant))).map(clientView),
    }),
  );
};
