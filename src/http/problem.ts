import { type Static, Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthChallenge, ErrorCode, FieldError, HeraldError } from '../errors.ts';
import { withExample } from './examples.ts';
import { MAX_FIELD_ERRORS } from './field-messages.ts';
import { rateLimitHeaders } from './rate-limit-headers.ts';
import { literals } from './schema.ts';

export const PROBLEM_JSON = 'application/problem+json';

/** The one map from an error code to its HTTP status. */
const STATUS: Record<ErrorCode, number> = {
  AUTH_INVALID_TOKEN: 401,
  AUTH_INVALID_CREDENTIALS: 401,
  FORBIDDEN: 403,
  VALIDATION_FAILED: 400,
  MALFORMED_BODY: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  PAYLOAD_TOO_LARGE: 413,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  TEMPLATE_NOT_FOUND: 422,
  RECIPIENT_NOT_FOUND: 422,
  RENDER_LIMIT: 422,
  IDEMPOTENCY_CONFLICT: 409,
  INVALID_STATE: 409,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
  BAD_GATEWAY: 502,
  GATEWAY_TIMEOUT: 504,
  WEBHOOK_SIGNATURE_INVALID: 401,
  INTERNAL: 500,
};

const TITLE: Record<ErrorCode, string> = {
  AUTH_INVALID_TOKEN: 'Invalid or missing access token',
  AUTH_INVALID_CREDENTIALS: 'Invalid email or password',
  FORBIDDEN: 'Forbidden',
  VALIDATION_FAILED: 'Validation failed',
  MALFORMED_BODY: 'Malformed request body',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported media type',
  PAYLOAD_TOO_LARGE: 'Payload too large',
  NOT_FOUND: 'Not found',
  METHOD_NOT_ALLOWED: 'Method not allowed',
  TEMPLATE_NOT_FOUND: 'Template not found',
  RECIPIENT_NOT_FOUND: 'Recipient not found',
  RENDER_LIMIT: 'Render limit exceeded',
  IDEMPOTENCY_CONFLICT: 'Idempotency key reused with a different body',
  INVALID_STATE: 'Invalid state for this operation',
  CONFLICT: 'Conflict',
  RATE_LIMITED: 'Too many requests',
  UNAVAILABLE: 'Service unavailable',
  BAD_GATEWAY: 'Bad gateway',
  GATEWAY_TIMEOUT: 'Gateway timeout',
  WEBHOOK_SIGNATURE_INVALID: 'Invalid webhook signature',
  INTERNAL: 'Internal server error',
};

/**
 * The RFC 9457 body every error answer carries; the OpenAPI document describes it with this. Its
 * example is a `400` listing every problem of a body at once (field-messages.ts).
 */
export const ProblemSchema = withExample(
  Type.Object(
    {
      type: Type.String({ format: 'uri' }),
      title: Type.String(),
      status: Type.Integer({ minimum: 400, maximum: 599 }),
      detail: Type.String(),
      code: literals(Object.keys(STATUS) as ErrorCode[]),
      errors: Type.Optional(
        Type.Array(
          Type.Object({ path: Type.String(), message: Type.String() }, { additionalProperties: true }),
        ),
      ),
    },
    { title: 'Problem', additionalProperties: true },
  ),
  {
    type: 'https://herald.dev/problems/validation-failed',
    title: 'Validation failed',
    status: 400,
    detail: 'The notification is invalid.',
    code: 'VALIDATION_FAILED',
    errors: [
      { path: 'body/channel', message: "must have required property 'channel'" },
      { path: 'body/chanel', message: "must NOT have additional property 'chanel'" },
      { path: 'body/recipient/deviceToken', message: 'must be at least 8 characters' },
    ],
  },
);

export type Problem = Static<typeof ProblemSchema>;

/**
 * Builds the problem body for a code; 5xx bodies never carry internal detail, and no body lists
 * more than MAX_FIELD_ERRORS field errors.
 */
export function problem(code: ErrorCode, detail?: string, errors?: FieldError[]): Problem {
  const status = STATUS[code];
  const body: Problem = {
    type: `https://herald.dev/problems/${code.toLowerCase().replaceAll('_', '-')}`,
    title: TITLE[code],
    status,
    detail: code === 'INTERNAL' ? TITLE[code] : (detail ?? TITLE[code]),
    code,
  };
  if (errors && errors.length > 0) body.errors = errors.slice(0, MAX_FIELD_ERRORS);
  return body;
}

/** The problem body of a thrown HeraldError (a batch item's error uses it too). */
export function problemOf(error: HeraldError): Problem {
  return problem(error.code, error.detail, error.errors);
}

/** RFC 6750 section 3: the WWW-Authenticate value of a bearer-token refusal. */
function bearerChallenge(challenge: AuthChallenge): string {
  const parts = ['Bearer realm="herald"'];
  if (challenge.error) parts.push(`error="${challenge.error}"`);
  if (challenge.description) parts.push(`error_description="${challenge.description}"`);
  if (challenge.scope) parts.push(`scope="${challenge.scope}"`);
  return parts.join(', ');
}

/** The response headers an error asks for (Retry-After, WWW-Authenticate, RateLimit-Policy and RateLimit). */
export function headersOf(error: HeraldError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (error.retryAfterS !== undefined)
    headers['Retry-After'] = String(Math.max(1, Math.ceil(error.retryAfterS)));
  if (error.challenge) headers['WWW-Authenticate'] = bearerChallenge(error.challenge);
  if (error.rateLimit) Object.assign(headers, rateLimitHeaders(error.rateLimit));
  return headers;
}

/** Sends a problem+json answer; the one way an error leaves Herald. */
export function sendProblem(reply: FastifyReply, code: ErrorCode, detail?: string, errors?: FieldError[]) {
  const body = problem(code, detail, errors);
  return reply.code(body.status).type(PROBLEM_JSON).send(body);
}

/** `404` for a path nothing serves, naming the method and the path (never the query). */
export function sendNoRoute(request: FastifyRequest, reply: FastifyReply) {
  return sendProblem(reply, 'NOT_FOUND', `No route for ${request.method} ${request.url.split('?')[0]}`);
}

/**
 * `405` with `Allow` for a path served with other methods. The detail names the methods, not the
 * path, which may hold a token.
 */
export function sendMethodNotAllowed(
  request: FastifyRequest,
  reply: FastifyReply,
  allowed: readonly string[],
) {
  const allow = allowed.join(', ');
  reply.header('allow', allow);
  return sendProblem(
    reply,
    'METHOD_NOT_ALLOWED',
    `${request.method} is not served here; this path takes ${allow}.`,
  );
}

/** Whether a code is a server-side failure (logged, detail hidden). */
export const isServerError = (code: ErrorCode) => STATUS[code] >= 500;
