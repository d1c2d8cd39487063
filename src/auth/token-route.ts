import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { HeraldError } from '../errors.ts';
import { withExample } from '../http/examples.ts';
import { headersOf, isServerError } from '../http/problem.ts';
import type { App, RouteModule } from '../http/types.ts';
import { loginTurn } from './argon2-gate.ts';
import { clientAddress, trustedProxies } from './client-address.ts';
import type { AuthDeps } from './service.ts';

/** An OAuth 2.0 error answer (RFC 6749 section 5.2): this endpoint's only error shape. */
class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
    /** Extra answer headers (Retry-After on a throttled attempt). */
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

const TokenRequest = withExample(
  Type.Object(
    {
      grant_type: Type.String({ description: 'client_credentials' }),
      client_id: Type.Optional(Type.String()),
      client_secret: Type.Optional(Type.String()),
      scope: Type.Optional(Type.String({ description: 'space-separated subset of the client scopes' })),
    },
    // RFC 6749 section 3.2: unrecognised parameters are ignored, not refused.
    { additionalProperties: true },
  ),
  {
    grant_type: 'client_credentials',
    client_id: 'cli_5f2b8c0e9a4d7e1f3b6c8a2d',
    client_secret: 'kQ3vN8xR2mT7yW1zB5cF9hJ4lP6sD0gA-eU3iO8nV2w',
  },
);
const TokenAnswer = withExample(
  Type.Object({
    access_token: Type.String(),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer(),
    scope: Type.String(),
  }),
  {
    access_token: 'eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJjbGlfNWYyYiJ9.c2lnbmF0dXJl',
    token_type: 'Bearer',
    expires_in: 600,
    scope: 'notifications:send',
  },
);
const OAuthProblem = Type.Object({ error: Type.String(), error_description: Type.String() });

function formParser(
  _request: FastifyRequest,
  body: string | Buffer,
  done: (e: Error | null, v?: unknown) => void,
) {
  const params = new URLSearchParams(body.toString());
  const result: Record<string, string> = {};
  for (const [name, value] of params) {
    // RFC 6749 section 3.2: a parameter sent twice makes the request invalid.
    if (Object.hasOwn(result, name))
      return done(new OAuthError(400, 'invalid_request', `"${name}" repeated`));
    result[name] = value;
  }
  done(null, result);
}

/** Reads HTTP Basic client credentials (RFC 6749 section 2.3.1: each part form-url-encoded). */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    const decodePart = (part: string) => decodeURIComponent(part.replaceAll('+', ' '));
    return { id: decodePart(decoded.slice(0, colon)), secret: decodePart(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

/**
 * Herald's own errors in the OAuth form: a throttled (429) or overloaded (503) try is
 * `temporarily_unavailable`; bad input found by the app-wide checks (refuseNul: a U+0000 in the
 * body), which carry a problem code rather than a status, is `invalid_request`. Undefined for a
 * server error.
 */
function oauthFormOf(error: HeraldError): OAuthError | undefined {
  if (error.code === 'RATE_LIMITED' || error.code === 'UNAVAILABLE') {
    const status = error.code === 'RATE_LIMITED' ? 429 : 503;
    return new OAuthError(status, 'temporarily_unavailable', error.detail ?? error.message, headersOf(error));
  }
  if (isServerError(error.code)) return undefined;
  return new OAuthError(400, 'invalid_request', error.detail ?? error.message);
}

function sendOAuthError(reply: FastifyReply, error: OAuthError) {
  if (error.error === 'invalid_client') reply.header('WWW-Authenticate', 'Basic realm="herald"');
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .code(error.status)
    .header('Cache-Control', 'no-store')
    .send({ error: error.error, error_description: error.description });
}

/** POST /auth/token: OAuth 2.0 client credentials for backend services (public). */
export const tokenRoute: RouteModule<AuthDeps> = async (app, deps) => {
  const { tokens } = deps.auth;
  const isTrusted = trustedProxies(deps.config.trustedProxies);
  await app.register(async (scope: App) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, formParser);
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      if (error instanceof OAuthError) return sendOAuthError(reply, error);
      const oauth = error instanceof HeraldError ? oauthFormOf(error) : undefined;
      if (oauth) return sendOAuthError(reply, oauth);
      const status = error instanceof HeraldError ? 500 : (error.statusCode ?? 500);
      if (status >= 500) {
        request.log.error({ err: error }, 'token endpoint failed');
        return reply.code(500).send({ error: 'server_error', error_description: 'Internal error' });
      }
      return sendOAuthError(reply, new OAuthError(400, 'invalid_request', 'The request is malformed.'));
    });
    scope.post(
      '/auth/token',
      {
        schema: {
          tags: ['auth'],
          summary: 'OAuth 2.0 client credentials grant',
          description:
            "A service client's id and secret (by HTTP Basic, or client_id and client_secret in a form or JSON body) for an access token of 10 minutes, with the client's scopes or the subset `scope` asks for. Errors are OAuth 2.0 errors (RFC 6749 section 5.2), not problem+json; 10 failures for one client in 15 minutes are 429.",
          consumes: ['application/x-www-form-urlencoded', 'application/json'],
          body: TokenRequest,
          response: {
            200: TokenAnswer,
            400: OAuthProblem,
            401: OAuthProblem,
            429: OAuthProblem,
            503: OAuthProblem,
          },
        },
      },
      async (request, reply) => {
        const body = request.body as Record<string, unknown>;
        const basic = basicCredentials(request.headers.authorization);
        if (basic && (body.client_id !== undefined || body.client_secret !== undefined)) {
          // RFC 6749 section 2.3: one authentication method per request.
          throw new OAuthError(400, 'invalid_request', 'Send the client credentials one way only.');
        }
        const id = basic?.id ?? body.client_id;
        const secret = basic?.secret ?? body.client_secret;
        if (body.grant_type !== 'client_credentials') {
          throw new OAuthError(400, 'unsupported_grant_type', 'Only client_credentials is supported.');
        }
        const badClient = new OAuthError(401, 'invalid_client', 'Client authentication failed.');
        if (typeof id !== 'string' || typeof secret !== 'string' || id.length > 200) throw badClient;
        // Counted before the secret is checked, like a login (throttle.ts). An unknown id costs
        // the same digest as a known one (client-secrets.ts).
        const address = clientAddress(request, isTrusted);
        const checked = await deps.auth.throttles.token.checked(id, address, async () => {
          const found = await deps.store.auth.findClient(id);
          // A legacy argon2 secret is checked as a login is (argon2-gate.ts, loginTurn).
          const verdict = await deps.auth.clientSecrets.verify(found?.secretHash, secret, loginTurn(address));
          return found && verdict.ok && !found.disabled
            ? { client: found, upgrade: verdict.upgrade }
            : undefined;
        });
        if (!checked) throw badClient;
        const { client, upgrade } = checked;
        if (upgrade) await deps.store.auth.setClientSecret(client.id, upgrade);
        let scopes = client.scopes;
        if (typeof body.scope === 'string' && body.scope.trim()) {
          const asked = [...new Set(body.scope.split(' ').filter(Boolean))];
          if (asked.some((s) => !client.scopes.includes(s))) {
            throw new OAuthError(400, 'invalid_scope', 'A requested scope is not granted to this client.');
          }
          scopes = asked;
        }
        const access = await tokens.issueAccess({
          sub: client.id,
          tenant: client.tenant,
          scopes,
          clientId: client.id,
        });
        reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
        return {
          access_token: access.token,
          token_type: 'Bearer' as const,
          expires_in: access.expiresIn,
          scope: scopes.join(' '),
        };
      },
    );
  });
};
