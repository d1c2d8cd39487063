import { Type } from '@sinclair/typebox';
import type { RouteModule } from '../http/types.ts';
import type { AuthDeps } from './service.ts';

/**
 * GET /auth/setup (public): whether nobody can sign in yet, so the sign-in page can say how to
 * create the first admin. It tells a stranger only that no user exists, nothing about any user.
 * Users are never deleted, so once one exists the answer stays false and the store is not asked
 * again.
 */
export const setupRoute: RouteModule<AuthDeps> = (app, deps) => {
  let hasUsers = false;
  app.get(
    '/auth/setup',
    {
      schema: {
        tags: ['auth'],
        summary: 'Whether the first admin still has to be created',
        response: { 200: Type.Object({ setupNeeded: Type.Boolean() }, { additionalProperties: false }) },
      },
    },
    async () => {
      hasUsers ||= await deps.store.auth.hasUsers();
      return { setupNeeded: !hasUsers };
    },
  );
};
