import { Type } from '@sinclair/typebox';
import type { CoreDeps } from '../deps.ts';
import { withExample } from '../http/examples.ts';
import type { RouteModule } from '../http/types.ts';

const Me = withExample(
  Type.Object({
    sub: Type.String(),
    tid: Type.String(),
    scope: Type.String(),
    kind: Type.Union([Type.Literal('user'), Type.Literal('client'), Type.Literal('recipient')]),
    email: Type.Optional(Type.String()),
    role: Type.Optional(Type.String()),
  }),
  {
    sub: 'usr_0b9c2a4e-5d1f-4b7a-9c3e-2f6d8a1b4c5e',
    tid: 'default',
    scope:
      'notifications:send notifications:read templates:read templates:write recipients:read recipients:write admin',
    kind: 'user',
    email: 'admin@example.com',
    role: 'admin',
  },
);

/** GET /auth/me (protected, any scope): the caller as its token and its user record describe it. */
export const meRoute: RouteModule<CoreDeps> = (app, deps) => {
  app.get(
    '/auth/me',
    {
      config: { openToRecipients: true },
      schema: {
        tags: ['auth'],
        summary: 'The caller',
        description:
          'Who the access token speaks for: its subject, tenant, scopes and kind, and for a user its email and role. Any scope, a recipient token (kind `recipient`, sub `rcp:` + the recipientId) included.',
        response: { 200: Me },
      },
    },
    async (request) => {
      const p = request.principal;
      const me: {
        sub: string;
        tid: string;
        scope: string;
        kind: 'user' | 'client' | 'recipient';
        email?: string;
        role?: string;
      } = { sub: p.sub, tid: p.tenant, scope: p.scope, kind: p.kind };
      if (p.kind === 'user') {
        const user = await deps.store.auth.findUserById(p.sub);
        if (user) {
          me.email = user.email;
          me.role = user.role;
        } else if (p.role) me.role = p.role;
      }
      return me;
    },
  );
};
