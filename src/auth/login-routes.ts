import type { FastifyReply } from 'fastify';
import { HeraldError } from '../errors.ts';
import type { RouteModule } from '../http/types.ts';
import type { UserRecord } from '../store/port/auth.ts';
import { normalizeEmail } from './accounts.ts';
import { loginTurn } from './argon2-gate.ts';
import { clientAddress, trustedProxies } from './client-address.ts';
import { passwordUser } from './password-login.ts';
import { dummyHash } from './passwords.ts';
import { LoginBody, RefreshBody, TokenPair } from './schemas.ts';
import type { AuthDeps } from './service.ts';
import { sendTokenPair } from './token-pair.ts';

/** POST /auth/login and POST /auth/refresh (public). */
export const loginRoutes: RouteModule<AuthDeps> = (app, deps) => {
  const { tokens, throttles } = deps.auth;
  const isTrusted = trustedProxies(deps.config.trustedProxies);
  // Made now rather than on the first unknown email, whose answer would otherwise be slower.
  dummyHash().catch(() => undefined);

  const sendPair = (reply: FastifyReply, user: UserRecord, loginMs: number) =>
    sendTokenPair(reply, tokens, user, loginMs);

  app.post(
    '/auth/login',
    {
      schema: {
        tags: ['auth'],
        summary: 'Log in with email and password',
        description:
          'Answers an access token (an ES256 JWT, 10 minutes) and a refresh token (12 hours sliding, 7 days at most), with Cache-Control: no-store. An email that is a user of several tenants names the one with `tenant`. A wrong email or password is 401; 10 failures for one email or 100 from one address in 15 minutes are 429 with Retry-After.',
        body: LoginBody,
        response: { 200: TokenPair },
      },
    },
    async (request, reply) => {
      const email = normalizeEmail(request.body.email);
      const address = clientAddress(request, isTrusted);
      // Counted before the password is checked, so parallel tries cannot outrun the limit. The
      // count is per email, whatever the tenant named: naming each tenant in turn gets no more
      // tries, and a login naming none checks several tenants' users of the email at once.
      const user = await throttles.login.checked(email, address, () =>
        passwordUser(deps.store.auth, {
          email,
          password: request.body.password,
          tenant: request.body.tenant,
          turn: loginTurn(address),
        }),
      );
      if (!user) throw new HeraldError('AUTH_INVALID_CREDENTIALS', 'The email or password is wrong.');
      return sendPair(reply, user, deps.clock.now());
    },
  );

  app.post(
    '/auth/refresh',
    {
      schema: {
        tags: ['auth'],
        summary: 'Trade a refresh token for a new token pair',
        description:
          'A new access and refresh token, before the old access token expires. A refresh token of a user who signed out everywhere, changed the password or was disabled since is 401.',
        body: RefreshBody,
        response: { 200: TokenPair },
      },
      // No body at all is a missing refresh token (401), not a schema error (400).
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
    },
    async (request, reply) => {
      const token = request.body.refresh_token;
      if (!token) throw refreshRefused();
      const claims = await tokens.verifyRefresh(token).catch(() => {
        throw refreshRefused();
      });
      const user = await deps.store.auth.findUserById(claims.sub);
      // The user is re-read on every refresh: a disabled or moved user gets no new tokens, and a
      // session that began before the user signed out everywhere is over.
      if (!user || user.disabled || user.tenant !== claims.tenant) throw refreshRefused();
      if (user.sessionsValidAfter !== null && claims.loginMs < user.sessionsValidAfter)
        throw refreshRefused();
      return sendPair(reply, user, claims.loginMs);
    },
  );
};

function refreshRefused(): HeraldError {
  return new HeraldError('AUTH_INVALID_TOKEN', 'The refresh token is invalid or expired.', {
    challenge: { error: 'invalid_token' },
  });
}
