import { type Static, Type } from '@sinclair/typebox';
import { literals } from '../http/schema.ts';
import { USER_EMAIL } from './accounts.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './password-rules.ts';
import { SCOPES, TENANT_NAME } from './principal.ts';

/** A tenant name: lowercase, URL-safe. */
export const TenantName = Type.String({ pattern: TENANT_NAME.source });

/**
 * POST /auth/login body. The password length is capped here, before anything hashes it. `tenant`
 * picks among users of the same email in several tenants (password-login.ts).
 */
export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
    tenant: Type.Optional(TenantName),
  },
  { additionalProperties: false },
);
export type LoginBody = Static<typeof LoginBody>;

/** POST /auth/refresh body; a missing token is a 401 like any bad one, so it is optional here. */
export const RefreshBody = Type.Object(
  { refresh_token: Type.Optional(Type.String({ maxLength: 8192 })) },
  { additionalProperties: false },
);

/** The answer of login and refresh. */
export const TokenPair = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  refresh_token: Type.String(),
  refresh_expires_in: Type.Integer(),
});

export const ScopeName = literals(SCOPES);

export const CreateUserBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320, pattern: USER_EMAIL.source }),
    password: Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH }),
    role: Type.Union([Type.Literal('admin'), Type.Literal('sender'), Type.Literal('viewer')]),
    tenant: Type.Optional(TenantName),
  },
  { additionalProperties: false },
);

export const UserView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.String(),
  tenant: Type.String(),
  disabled: Type.Boolean(),
  createdAt: Type.String(),
});

export const CreateClientBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    scopes: Type.Array(ScopeName, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
    tenant: Type.Optional(TenantName),
  },
  { additionalProperties: false },
);

export const ClientView = Type.Object({
  client_id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  tenant: Type.String(),
  disabled: Type.Boolean(),
  createdAt: Type.String(),
});

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
