import { Type } from '@sinclair/typebox';
import { INBOX_SCOPE, RECIPIENT_SUB_PREFIX } from '../auth/principal.ts';
import type { AuthDeps } from '../auth/service.ts';
import { HeraldError } from '../errors.ts';
import { withExample } from '../http/examples.ts';
import type { RouteModule } from '../http/types.ts';
import { RecipientParams } from '../recipients/schemas.ts';

const RecipientToken = withExample(
  Type.Object({
    access_token: Type.String(),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds: HERALD_INBOX_TOKEN_TTL (3600)' }),
  }),
  {
    access_token: 'eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJyY3A6dXNlci00MiJ9.c2lnbmF0dXJl',
    token_type: 'Bearer',
    expires_in: 3600,
  },
);

/**
 * POST /recipients/{recipientId}/token (docs/inbox-api.md): a recipient token, an access token like
 * every other (same keys, issuer and audience, verified statelessly anywhere) whose subject is the
 * recipient (`rcp:` + its ID) and whose only scope is `inbox`. The caller's backend mints it for
 * its signed-in user; what the token reaches is decided once, in auth/bearer.ts.
 */
export const recipientTokenRoute: RouteModule<AuthDeps> = (app, deps) => {
  app.post(
    '/recipients/:recipientId/token',
    {
      config: { scope: 'recipients:write' },
      schema: {
        tags: ['recipients'],
        summary: "A recipient token: the recipient's own access to its inbox",
        description:
          "Scope recipients:write. An access token (`typ: at+jwt`) for the recipient's browser or app: `sub` is `rcp:` followed by the recipientId, `tid` the tenant, the single scope `inbox`, valid HERALD_INBOX_TOKEN_TTL seconds (3600). It reaches only the /inbox endpoints and GET /auth/me; every other endpoint answers it 403. 404 for an ID the tenant has no recipient of. Takes no body. See docs/inbox-api.md.",
        params: RecipientParams,
        response: { 200: RecipientToken },
      },
    },
    async (request, reply) => {
      const { tenant } = request.principal;
      const { recipientId } = request.params;
      if (!(await deps.store.recipients.get(tenant, recipientId))) {
        throw new HeraldError('NOT_FOUND', 'No such recipient.');
      }
      const ttl = deps.config.auth.inboxTokenTtl;
      const { token, expiresIn } = await deps.auth.tokens.issueAccess(
        { sub: `${RECIPIENT_SUB_PREFIX}${recipientId}`, tenant, scopes: [INBOX_SCOPE] },
        ttl,
      );
      reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
      return { access_token: token, token_type: 'Bearer' as const, expires_in: expiresIn };
    },
  );
};
