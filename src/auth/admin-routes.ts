import { Type } from '@sinclair/typebox';
import { iso } from '../clock.ts';
import { HeraldError } from '../errors.ts';
import { exampleOf, withExample } from '../http/examples.ts';
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
const UserIdParams = Type.Object({
  id: Type.String({ maxLength: 100, examples: ['usr_0b9c2a4e-5d1f-4b7a-9c3e-2f6d8a1b4c5e'] }),
});
const ClientIdParams = Type.Object({
  id: Type.String({ maxLength: 100, examples: ['cli_5f2b8c0e9a4d7e1f3b6c8a2d'] }),
});
const SECRET_EXAMPLE = 'kQ3vN8xR2mT7yW1zB5cF9hJ4lP6sD0gA-eU3iO8nV2w';

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
        description:
          "A user is a tenant and an email; its role (admin, sender, viewer) gives its scopes. `tenant` defaults to the caller's, and only admins of tenant `default` may name another. The password has at least 12 characters and is not a common, repeated or sequential one (400 naming the rule). A duplicate within the tenant is 409.",
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
        description:
          "The users of the caller's tenant; admins of tenant `default` see every tenant's, or one named by `tenant`.",
        querystring: TenantQuery,
        response: {
          200: withExample(Type.Object({ items: Type.Array(UserView) }), { items: [exampleOf(UserView)] }),
        },
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
        description:
          'Its refresh tokens answer 401 from now on; access tokens it holds live until they expire (10 minutes by default).',
        params: UserIdParams,
        response: { 200: withExample(UserView, { ...exampleOf(UserView), disabled: true }) },
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
        description:
          'Every refresh token issued to the user before now answers 401 at its next use, on every instance. Takes no body.',
        params: UserIdParams,
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
        description:
          'A backend service exchanges the client id and secret for a 10-minute access token at POST /auth/token (client credentials). The secret is in this answer only: Herald keeps a keyed digest of it.',
        body: CreateClientBody,
        response: {
          201: withExample(Type.Composite([ClientView, Type.Object({ client_secret: Type.String() })]), {
            ...exampleOf(ClientView),
            client_secret: SECRET_EXAMPLE,
          }),
        },
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
        description:
          'For a leaked secret: the new one is in this answer only. Access tokens already issued live until they expire. Takes no body.',
        params: ClientIdParams,
        response: {
          200: withExample(Type.Object({ client_id: Type.String(), client_secret: Type.String() }), {
            client_id: exampleOf(ClientView).client_id,
            client_secret: SECRET_EXAMPLE,
          }),
        },
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
        description:
          'POST /auth/token refuses it from now on; access tokens already issued live until they expire. Takes no body.',
        params: ClientIdParams,
        response: { 200: withExample(ClientView, { ...exampleOf(ClientView), disabled: true }) },
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
        description:
          "The clients of the caller's tenant (never their secrets); admins of tenant `default` see every tenant's, or one named by `tenant`.",
        querystring: TenantQuery,
        response: {
          200: withExample(Type.Object({ items: Type.Array(ClientView) }), {
            items: [exampleOf(ClientView)],
          }),
        },
      },
    },
    async (request) => ({
      items: (await store.listClients(listTenant(request.principal, request.query.tenant))).map(clientView),
    }),
  );
};
