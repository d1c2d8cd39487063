import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HeraldError } from '../errors.ts';
import { isStoreBusy } from '../store-busy.ts';
import { fieldMessage } from './field-messages.ts';
import {
  headersOf,
  isServerError,
  problemOf,
  sendMethodNotAllowed,
  sendNoRoute,
  sendProblem,
} from './problem.ts';
import { routeMethods } from './route-methods.ts';

/** The detail of a `413`: the limit of the route the body was sent to, in bytes. */
export const tooLarge = (limit: number) => `The body exceeds the limit of ${limit} bytes for this route.`;

/**
 * Maps Fastify's own error codes (parser, limits, validation) to the contract's codes;
 * `bodyLimit` is the limit of the route the request was sent to.
 */
function fromFastifyError(error: FastifyError, bodyLimit: number): HeraldError | undefined {
  if (error.validation) {
    // Every error of a small value (lazy-compilers.ts); problem() lists the first MAX_FIELD_ERRORS.
    const errors = joinChoices(error.validation).map((v) => ({
      path: validationPath(v.instancePath, v.params as Record<string, unknown>, error.validationContext),
      message: fieldMessage({ keyword: v.keyword, params: v.params as Record<string, unknown> }, v.message),
    }));
    return new HeraldError('VALIDATION_FAILED', 'The request does not match the schema.', { errors });
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HeraldError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HeraldError('PAYLOAD_TOO_LARGE', tooLarge(bodyLimit));
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HeraldError('MALFORMED_BODY', 'The JSON body is empty.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      // Fastify's parser refuses a `__proto__` or `constructor.prototype` key (prototype
      // poisoning) with the same error as broken JSON, and does not say which it was.
      return new HeraldError(
        'MALFORMED_BODY',
        'The body is not valid JSON, or holds a __proto__ or constructor.prototype key.',
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new HeraldError('MALFORMED_BODY', 'The body is shorter or longer than its Content-Length.');
    default:
      break;
  }
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return new HeraldError('MALFORMED_BODY', 'The body could not be parsed.');
  }
  if (error.statusCode === 413) return new HeraldError('PAYLOAD_TOO_LARGE', tooLarge(bodyLimit));
  if (error.statusCode === 415) return new HeraldError('UNSUPPORTED_MEDIA_TYPE');
  if (error.statusCode === 404) return new HeraldError('NOT_FOUND');
  if (error.statusCode === 405) return new HeraldError('METHOD_NOT_ALLOWED');
  return undefined;
}

type SchemaError = NonNullable<FastifyError['validation']>[number];

/**
 * A value that is none of a union of literals (TypeBox's `Union([Literal…])`, an `anyOf` of
 * `const`s: every status, priority, channel) makes Ajv report each branch it tried and then the
 * `anyOf`: nine errors that all say "must be equal to constant". They are joined into one that
 * names the choices ("must be one of …", field-messages.ts). A branch's errors come just before
 * their `anyOf`, so each is found by looking back from it: linear in the errors, however many
 * `allErrors` reports.
 */
function joinChoices(errors: SchemaError[]): SchemaError[] {
  const out: SchemaError[] = [];
  for (const error of errors) {
    if (error.keyword !== 'anyOf') {
      out.push(error);
      continue;
    }
    const prefix = `${error.schemaPath}/`;
    let start = out.length;
    while (start > 0 && out[start - 1]?.schemaPath.startsWith(prefix)) start--;
    const branches = out.slice(start);
    const tried = new Set(branches.map((e) => e.schemaPath.slice(prefix.length).split('/')[0]));
    const choices = branches.filter((e) => e.keyword === 'const').map((e) => String(e.params.allowedValue));
    if (choices.length === 0 || choices.length !== tried.size) {
      out.push(error);
      continue;
    }
    out.length = start;
    out.push({ ...error, keyword: 'enum', params: { allowedValues: choices } });
  }
  return out;
}

function validationPath(
  instancePath: string,
  params: Record<string, unknown>,
  context: string | undefined,
): string {
  const base = instancePath || '';
  const extra = params.additionalProperty ?? params.missingProperty;
  const path = typeof extra === 'string' ? `${base}/${extra}` : base;
  return `${context ?? 'body'}${path}`;
}

/** A database that could not do the work now (store-busy.ts): 503, retry shortly. */
const busyStore = () =>
  new HeraldError('UNAVAILABLE', 'The database is busy; nothing was changed. Retry shortly.', {
    retryAfterS: 1,
  });

/**
 * The single error handler: every HeraldError, Fastify's own errors and a busy database's leave
 * as problem+json.
 */
function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const herald =
    error instanceof HeraldError
      ? error
      : isStoreBusy(error)
        ? busyStore()
        : fromFastifyError(error, request.routeOptions.bodyLimit);
  if (!herald) {
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, 'INTERNAL');
  }
  if (isServerError(herald.code)) request.log.error({ err: error }, herald.message);
  for (const [name, value] of Object.entries(headersOf(herald))) reply.header(name, value);
  const body = problemOf(herald);
  return sendProblem(reply, body.code, body.detail, body.errors);
}

/**
 * Errors Fastify raises before any route or hook runs (FastifyServerOptions.frameworkErrors):
 * a path that is not valid percent-encoding, or an encoded `..` or byte the router refuses, is
 * no route of Herald's (404), not a malformed body, and so is a path segment too long to be any
 * name of Herald's; a bad Content-Type header is a wrong media type (415). Answered as
 * problem+json, like every other error.
 */
export function frameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_ASYNC_CONSTRAINT') {
    return sendNoRoute(request, reply);
  }
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return sendProblem(reply, 'UNSUPPORTED_MEDIA_TYPE');
  // A path segment longer than any name Herald gives (server-options.ts): nothing is there. The
  // path is not repeated in the answer, nor logged (it may hold an unsubscribe token).
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return sendProblem(reply, 'NOT_FOUND', 'No such resource: a path segment is too long.');
  }
  return handleError(error, request, reply);
}

/**
 * Installs the single error handler and the not-found handler on an app, before its routes: a
 * path served with other methods answers `405` with `Allow`, one nothing serves `404`.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler(handleError);
  const methodsOf = routeMethods(app);
  app.setNotFoundHandler((request, reply) => {
    const allowed = methodsOf(request.url.split('?')[0] ?? '');
    return allowed.length === 0 ? sendNoRoute(request, reply) : sendMethodNotAllowed(request, reply, allowed);
  });
}
