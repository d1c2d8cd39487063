/**
 * Operational errors, with no transport in them: domain code throws these, and the one HTTP error
 * handler (src/http/problem.ts) maps each code to a status, a title and headers. Shaped after
 * jose's error classes: a stable `code` union, never a message to parse.
 */

/** Stable error codes of the contract (README "Errors", the OpenAPI document), plus the few Herald adds. */
export type ErrorCode =
  | 'AUTH_INVALID_TOKEN'
  | 'AUTH_INVALID_CREDENTIALS'
  | 'FORBIDDEN'
  | 'VALIDATION_FAILED'
  | 'MALFORMED_BODY'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'PAYLOAD_TOO_LARGE'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'TEMPLATE_NOT_FOUND'
  | 'RECIPIENT_NOT_FOUND'
  | 'RENDER_LIMIT'
  | 'IDEMPOTENCY_CONFLICT'
  | 'INVALID_STATE'
  | 'CONFLICT'
  | 'RATE_LIMITED'
  | 'UNAVAILABLE'
  | 'BAD_GATEWAY'
  | 'GATEWAY_TIMEOUT'
  | 'WEBHOOK_SIGNATURE_INVALID'
  | 'INTERNAL';

/** One field-level problem inside a VALIDATION_FAILED answer. */
export interface FieldError {
  path: string;
  message: string;
}

/**
 * What an authentication failure says about itself (RFC 6750 section 3): the HTTP layer turns it
 * into the WWW-Authenticate challenge. `error` is absent when no token was sent at all.
 */
export interface AuthChallenge {
  error?: 'invalid_token' | 'insufficient_scope';
  description?: string;
  scope?: string;
}

/**
 * One limit's state for the IETF RateLimit-Policy and RateLimit fields (src/http/rate-limit-headers.ts):
 * its name, `quota` units per `windowS` seconds, `remaining` units and seconds to `resetS`.
 */
export interface RateLimitState {
  policy: string;
  quota: number;
  windowS: number;
  remaining: number;
  resetS: number;
}

/** Options of a HeraldError beyond its code and detail. */
export interface HeraldErrorOptions {
  errors?: FieldError[];
  /** Seconds after which a retry may succeed (RATE_LIMITED, UNAVAILABLE). */
  retryAfterS?: number;
  /** For AUTH_INVALID_TOKEN and FORBIDDEN: the bearer challenge to answer with. */
  challenge?: AuthChallenge;
  /** For RATE_LIMITED by a quota: the limits, for the RateLimit-Policy and RateLimit fields. */
  rateLimit?: RateLimitState[];
}

/** An operational error with a stable code. */
export class HeraldError extends Error {
  readonly code: ErrorCode;
  /** What the caller is told; the HTTP layer uses the code's title when it is absent. */
  readonly detail: string | undefined;
  readonly errors: FieldError[] | undefined;
  readonly retryAfterS: number | undefined;
  readonly challenge: AuthChallenge | undefined;
  readonly rateLimit: RateLimitState[] | undefined;
  constructor(code: ErrorCode, detail?: string, options: HeraldErrorOptions = {}) {
    super(detail ?? code);
    this.name = 'HeraldError';
    this.code = code;
    this.detail = detail;
    this.errors = options.errors;
    this.retryAfterS = options.retryAfterS;
    this.challenge = options.challenge;
    this.rateLimit = options.rateLimit;
  }
}
