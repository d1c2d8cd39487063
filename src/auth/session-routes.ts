import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { HeraldError } from '../errors.ts';
import { withExample } from '../http/examples.ts';
import type { RouteModule } from '../http/types.ts';
import type { UserRecord } from '../store/port/auth.ts';
import { principalTurn } from './argon2-gate.ts';
import { clientAddress, trustedProxies } from './client-address.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './password-rules.ts';
import { hashSecret, refuseWeakPassword, verifySecret } from './passwords.ts';
import type { AuthDeps } from './service.ts';

const PasswordChange = withExample(
  Type.Object(
    {
      currentPassword: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
      newPassword: Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH }),
    },
    { additionalProperties: false },
  ),
  { currentPassword: 'change-me-now', newPassword: 'a much longer passphrase' },
);

/**
 * POST /auth/logout-all and POST /auth/password (protected, users only): a signed-in user ends
 * every session it has, or changes its password, which ends them too (docs/authentication.md).
 * Access tokens already issued live until they expire.
 */
export const sessionRoutes: RouteModule<AuthDeps> = (app, deps) => {
  const isTrusted = trustedProxies(deps.config.trustedProxies);

  /** The caller's user record; a service client has none (403). */
  async function callingUser(request: FastifyRequest): Promise<UserRecord> {
    const p = request.principal;
    if (p.kind !== 'user') throw new HeraldError('FORBIDDEN', 'Only users have sessions and passwords.');
    const user = await deps.store.auth.findUserById(p.sub);
    if (!user || user.disabled || user.tenant !== p.tenant) {
      throw new HeraldError('AUTH_INVALID_TOKEN', 'The user of this token no longer exists.');
    }
    return user;
  }

  app.post(
    '/auth/logout-all',
    {
      schema: {
        tags: ['auth'],
        summary: 'Sign out everywhere: every refresh token of the caller stops working',
        description:
          'Users only (a service client gets 403). Every refresh token issued to the caller before now answers 401 at its next use, on every instance; access tokens live until they expire. Takes no body.',
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const user = await callingUser(request);
      await deps.store.auth.revokeSessions(user.id, deps.clock.now());
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/auth/password',
    {
      schema: {
        tags: ['auth'],
        summary: 'Change the caller’s password (ends every session)',
        description:
          'Users only. A wrong current password is 401 and counts as a failed login; a weak new one is 400 naming the rule. Every refresh token issued before the change answers 401 from then on.',
        body: PasswordChange,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const user = await callingUser(request);
      // Before the current password is checked: a refused new one costs no argon2 and no try.
      refuseWeakPassword(request.body.newPassword, 'body/newPassword');
      const turn = principalTurn(request.principal);
      // A wrong current password is a failed login for this email (counted before the check).
      const ok = await deps.auth.throttles.login.checked(user.email, clientAddress(request, isTrusted), () =>
        verifySecret(user.passwordHash, request.body.currentPassword, turn),
      );
      if (!ok) throw new HeraldError('AUTH_INVALID_CREDENTIALS', 'The current password is wrong.');
      const hash = await hashSecret(request.body.newPassword, turn);
      await deps.store.auth.setUserPassword(user.id, hash, deps.clock.now());
      return reply.code(204).send(null);
    },
  );
};
