/** The scopes a token may carry; each protected route names the one it needs. */
export const SCOPES = [
  'notifications:send',
  'notifications:read',
  'templates:read',
  'templates:write',
  'admin',
] as const;
export type Scope = (typeof SCOPES)[number];

export const ROLE_SCOPES = {
  admin: [...SCOPES],
  sender: ['notifications:send', 'notifications:read', 'templates:read'],
  viewer: ['notifications:read', 'templates:read'],
} as const satisfies Record<string, readonly Scope[]>;
export type UserRole = keyof typeof ROLE_SCOPES;

/** Who made a request, as read from a verified access token. */
export interface Principal {
  sub: string;
  tenant: string;
  scopes: ReadonlySet<string>;
  /** The raw `scope` claim, as issued. */
  scope: string;
  kind: 'user' | 'client';
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
