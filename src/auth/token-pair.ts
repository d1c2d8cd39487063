import type { FastifyReply } from 'fastify';
import type { UserRecord } from '../store/port/auth.ts';
import { scopesOfRole } from './accounts.ts';
import { invalidToken } from './jwt.ts';
import type { TokenService } from './tokens.ts';

/**
 * The answer of every user sign-in (password login, refresh, OpenID Connect): a new access and
 * refresh token for `user`, whose refresh chain is capped from `loginMs` (the original sign-in,
 * epoch ms). Token answers are never cached.
 */
export async function sendTokenPair(
  reply: FastifyReply,
  tokens: TokenService,
  user: UserRecord,
  loginMs: number,
) {
  const access = await tokens.issueAccess({
    sub: user.id,
    tenant: user.tenant,
    scopes: scopesOfRole(user.role),
    role: user.role,
  });
  const refresh = await tokens.issueRefresh({ sub: user.id, tenant: user.tenant, loginMs });
  if (!refresh) throw invalidToken();
  reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
  return {
    access_token: access.token,
    token_type: 'Bearer' as const,
    expires_in: access.expiresIn,
    refresh_token: refresh.token,
    refresh_expires_in: refresh.expiresIn,
  };
}
