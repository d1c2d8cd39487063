/** The scopes a token may carry; each protected route names the one it needs. */
export const SCOPES = [
  'notifications:send',
  'notifications:read',
  'templates:read',
  'templates:write',
  'recipients:read',
  'recipients:write',
  'admin',
  'inbox',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * The scope of recipient tokens (POST /recipients/{id}/token, docs/inbox-api.md) and of nothing
 * else: no role includes it and no client may be given it, so a token with it is a recipient's.
 */
export const INBOX_SCOPE = 'inbox' satisfies Scope;
/** Recipient tokens' subject: this prefix, then the recipientId. */
export const RECIPIENT_SUB_PREFIX = 'rcp:';

/** The scopes a user's role or a service client may hold: every one but the recipients' `inbox`. */
export const GRANTABLE_SCOPES = SCOPES.filter(
  (scope): scope is Exclude<Scope, typeof INBOX_SCOPE> => scope !== INBOX_SCOPE,
);

export const ROLE_SCOPES = {
  admin: GRANTABLE_SCOPES,
  sender: ['notifications:send', 'notifications:read', 'templates:read'],
  viewer: ['notifications:read', 'templates:read'],
} as const satisfies Record<string, readonly Scope[]>;
export type UserRole = keyof typeof ROLE_SCOPES;

/** Tenant of the bootstrap admin; its admins may manage every tenant. */
export const DEFAULT_TENANT = 'default';

/** What a tenant name may be (the HTTP schemas, the CLI and HERALD_OIDC_TENANT all check it). */
export const TENANT_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/**
 * Whether the principal operates Herald itself: an admin-scoped caller of tenant `default`,
 * who manages every tenant and the resources they share (queues, the whole sandbox, metrics).
 */
export function isOperator(principal: { tenant: string }): boolean {
  return principal.tenant === DEFAULT_TENANT;
}

/**
 * Whose records a view of something every tenant shares (the queues, the sandbox) shows this
 * caller: every tenant's (`undefined`) to an operator, only its own tenant's to anyone else.
 */
export function visibleTenant(principal: { tenant: string }): string | undefined {
  return isOperator(principal) ? undefined : principal.tenant;
}

/** Who made a request, as read from a verified access token. */
export interface Principal {
  sub: string;
  tenant: string;
  scopes: ReadonlySet<string>;
  /** The raw `scope` claim, as issued. */
  scope: string;
  /** A recipient's token (sub `rcp:<recipientId>`, scope `inbox`) reaches only the inbox and GET /auth/me. */
  kind: 'user' | 'client' | 'recipient';
  email?: string;
  role?: string;
  /** Token expiry, epoch seconds. */
  exp: number;
}

/** Verifies access tokens; implemented in auth/ (local keys) or with a remote JWKS. */
export interface AccessTokenVerifier {
  /** Resolves to the principal, or throws HeraldError('AUTH_INVALID_TOKEN'). */
  verify(token: string): Promise<Principal>;
}
