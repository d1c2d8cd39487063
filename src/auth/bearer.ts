import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HeraldError } from '../errors.ts';
import {
  type AccessTokenVerifier,
  DEFAULT_TENANT,
  INBOX_SCOPE,
  isOperator,
  type Principal,
} from './principal.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on every protected route. */
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** The scope a protected route requires; checked once, by the hook below. */
    scope?: string;
    /**
     * The route acts on, or reports on, what every tenant shares (the queues, the process's
     * metrics): only operators (callers of tenant `default`, principal.ts) may call it.
     */
    operatorOnly?: boolean;
    /** A route without scope `inbox` that a recipient token may call too (GET /auth/me). */
    openToRecipients?: boolean;
  }
}

// RFC 6750: token68 characters only; anything else is a malformed header.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
/** Tokens longer than this are refused unread (a 10 KB token gets 401 before any parsing). */
const MAX_TOKEN_LENGTH = 4096;

function invalidToken(tokenSent: boolean, description: string): HeraldError {
  // One body for every refusal; only the challenge header (RFC 6750 section 3) says more.
  return new HeraldError('AUTH_INVALID_TOKEN', 'A valid bearer access token is required.', {
    challenge: tokenSent ? { error: 'invalid_token', description } : {},
  });
}

/** Reads the bearer token from the Authorization header only; query, form and cookie tokens are ignored. */
function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) throw invalidToken(false, 'Missing bearer token');
  const match = BEARER.exec(header);
  if (!match?.[1]) throw invalidToken(/^bearer\s/i.test(header), 'Malformed Authorization header');
  if (match[1].length > MAX_TOKEN_LENGTH) throw invalidToken(true, 'Token too long');
  return match[1];
}

/**
 * Whether the request's access token verifies still: an answer that outlives its request's
 * check (a live stream) asks again from time to time, and ends once its token has expired or
 * its signing key has been removed, like any new request with that token would get 401.
 */
export async function tokenStillValid(
  request: FastifyRequest,
  verifier: AccessTokenVerifier,
): Promise<boolean> {
  try {
    await verifier.verify(bearerToken(request) as string);
    return true;
  } catch {
    return false;
  }
}

/**
 * Refuses (403, with the bearer challenge naming the scope) a caller without `scope`: the route's
 * own scope, checked by the hook below, or the scope one of its parameters needs (`what`).
 */
export function requireScope(principal: Principal, scope: string, what: string): void {
  if (principal.scopes.has(scope)) return;
  throw new HeraldError('FORBIDDEN', `${what} needs the scope "${scope}".`, {
    challenge: { error: 'insufficient_scope', scope },
  });
}

/**
 * The one protection mechanism: every route registered inside `scope` requires a valid access
 * token, and its `config.scope` if it names one. Routes are protected by where they are
 * registered, not by per-route code, so a route added there cannot forget it.
 */
export function protect(scope: FastifyInstance, verifier: AccessTokenVerifier): void {
  scope.decorateRequest('principal', null as unknown as Principal);
  scope.addHook('onRequest', async (request) => {
    const token = bearerToken(request) as string;
    try {
      request.principal = await verifier.verify(token);
    } catch (error) {
      if (error instanceof HeraldError && error.code === 'AUTH_INVALID_TOKEN') {
        throw invalidToken(true, error.message);
      }
      throw error;
    }
    const needed = request.routeOptions.config.scope;
    // A recipient token (a person's browser holds it) reaches its inbox and nothing else, whatever
    // scope a route asks for, or none: checked here, once, for every route.
    if (
      request.principal.kind === 'recipient' &&
      needed !== INBOX_SCOPE &&
      !request.routeOptions.config.openToRecipients
    ) {
      throw new HeraldError(
        'FORBIDDEN',
        'A recipient token reaches only the inbox endpoints and GET /auth/me.',
        {
          challenge: { error: 'insufficient_scope' },
        },
      );
    }
    if (needed) requireScope(request.principal, needed, 'This operation');
    if (request.routeOptions.config.operatorOnly && !isOperator(request.principal)) {
      throw new HeraldError(
        'FORBIDDEN',
        `This operation concerns every tenant: only callers of tenant "${DEFAULT_TENANT}" may use it.`,
      );
    }
  });
}
