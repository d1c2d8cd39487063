import { Type } from '@sinclair/typebox';
import { withExample } from '../http/examples.ts';
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
        description:
          'Public. `true` while no user exists (the sign-in page then says how to create the first admin); it says nothing about any user.',
        response: {
          200: withExample(Type.Object({ setupNeeded: Type.Boolean() }, { additionalProperties: false }), {
            setupNeeded: true,
          }),
        },
      },
    },
    async () => {
      hasUsers ||= await deps.store.auth.hasUsers();
      return { setupNeeded: !hasUsers };
    },
  );
};
