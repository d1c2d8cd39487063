import { type Static, Type } from '@sinclair/typebox';
import { withExample } from '../http/examples.ts';
import { describedPattern } from '../http/field-messages.ts';
import { literals } from '../http/schema.ts';
import { USER_EMAIL } from './accounts.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './password-rules.ts';
import { GRANTABLE_SCOPES, TENANT_NAME } from './principal.ts';

/** A tenant name: lowercase, URL-safe. */
export const TenantName = Type.String({
  pattern: describedPattern(
    TENANT_NAME.source,
    'must be a tenant name: 1 to 63 lower-case letters, digits, dots, dashes or underscores, starting with a letter or digit',
  ),
});

/**
 * POST /auth/login body. The password length is capped here, before anything hashes it. `tenant`
 * picks among users of the same email in several tenants (password-login.ts).
 */
export const LoginBody = withExample(
  Type.Object(
    {
      email: Type.String({ minLength: 1, maxLength: 320 }),
      password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
      tenant: Type.Optional(TenantName),
    },
    { additionalProperties: false },
  ),
  { email: 'admin@example.com', password: 'change-me-now' },
);
export type LoginBody = Static<typeof LoginBody>;

/** POST /auth/refresh body; a missing token is a 401 like any bad one, so it is optional here. */
export const RefreshBody = withExample(
  Type.Object(
    { refresh_token: Type.Optional(Type.String({ maxLength: 8192 })) },
    { additionalProperties: false },
  ),
  { refresh_token: 'eyJhbGciOiJFUzI1NiIsInR5cCI6InJ0K2p3dCJ9.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJl' },
);

/** The answer of login and refresh. */
export const TokenPair = withExample(
  Type.Object({
    access_token: Type.String(),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer(),
    refresh_token: Type.String(),
    refresh_expires_in: Type.Integer(),
  }),
  {
    access_token: 'eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJl',
    token_type: 'Bearer',
    expires_in: 600,
    refresh_token: 'eyJhbGciOiJFUzI1NiIsInR5cCI6InJ0K2p3dCJ9.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJl',
    refresh_expires_in: 43200,
  },
);

/** A scope a user or client may hold: `inbox` is for recipient tokens only (principal.ts). */
export const ScopeName = literals(GRANTABLE_SCOPES);

export const CreateUserBody = withExample(
  Type.Object(
    {
      email: Type.String({
        minLength: 3,
        maxLength: 320,
        pattern: describedPattern(USER_EMAIL.source, 'must be an email address such as ada@example.com'),
      }),
      password: Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH }),
      role: Type.Union([Type.Literal('admin'), Type.Literal('sender'), Type.Literal('viewer')]),
      tenant: Type.Optional(TenantName),
    },
    { additionalProperties: false },
  ),
  { email: 'ops@acme.test', password: 'a-long-password', role: 'sender', tenant: 'acme' },
);

export const UserView = withExample(
  Type.Object({
    id: Type.String(),
    email: Type.String(),
    role: Type.String(),
    tenant: Type.String(),
    disabled: Type.Boolean(),
    createdAt: Type.String(),
  }),
  {
    id: 'usr_0b9c2a4e-5d1f-4b7a-9c3e-2f6d8a1b4c5e',
    email: 'ops@acme.test',
    role: 'sender',
    tenant: 'acme',
    disabled: false,
    createdAt: '2026-11-28T09:30:00.000Z',
  },
);

export const CreateClientBody = withExample(
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      scopes: Type.Array(ScopeName, { minItems: 1, maxItems: GRANTABLE_SCOPES.length, uniqueItems: true }),
      tenant: Type.Optional(TenantName),
    },
    { additionalProperties: false },
  ),
  { name: 'billing', scopes: ['notifications:send'], tenant: 'acme' },
);

export const ClientView = withExample(
  Type.Object({
    client_id: Type.String(),
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    tenant: Type.String(),
    disabled: Type.Boolean(),
    createdAt: Type.String(),
  }),
  {
    client_id: 'cli_5f2b8c0e9a4d7e1f3b6c8a2d',
    name: 'billing',
    scopes: ['notifications:send'],
    tenant: 'acme',
    disabled: false,
    createdAt: '2026-11-28T09:30:00.000Z',
  },
);

export const TenantQuery = Type.Object(
  { tenant: Type.Optional(TenantName) },
  { additionalProperties: false },
);

/**
 * A published JWK: only public members are listed, so the response serializer drops anything
 * else (a private `d`, `p`, `q`...) even if a bug put it there.
 */
export const PublicJwk = Type.Object({
  kty: Type.String(),
  kid: Type.String(),
  alg: Type.String(),
  use: Type.String(),
  crv: Type.Optional(Type.String()),
  x: Type.Optional(Type.String()),
  y: Type.Optional(Type.String()),
  n: Type.Optional(Type.String()),
  e: Type.Optional(Type.String()),
});
