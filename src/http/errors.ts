/** Stable error codes of the contract (API.md section 8), plus the few Herald adds. */
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
  | 'IDEMPOTENCY_CONFLICT'
  | 'INVALID_STATE'
  | 'CONFLICT'
  | 'RATE_LIMITED'
  | 'UNAVAILABLE'
  | 'BAD_GATEWAY'
  | 'GATEWAY_TIMEOUT'
  | 'INTERNAL';

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
  IDEMPOTENCY_CONFLICT: 409,
  INVALID_STATE: 409,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
  BAD_GATEWAY: 502,
  GATEWAY_TIMEOUT: 504,
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
  IDEMPOTENCY_CONFLICT: 'Idempotency key reused with a different body',
  INVALID_STATE: 'Invalid state for this operation',
  CONFLICT: 'Conflict',
  RATE_LIMITED: 'Too many requests',
  UNAVAILABLE: 'Service unavailable',
  BAD_GATEWAY: 'Bad gateway',
  GATEWAY_TIMEOUT: 'Gateway timeout',
  INTERNAL: 'Internal server error',
};

/** One field-level problem inside a VALIDATION_FAILED answer. */
export interface FieldError {
  path: string;
  message: string;
}

/** The RFC 9457 body every error answer carries. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: FieldError[];
}

/** An operational error with a stable code; the error handler turns it into problem+json. */
export class HeraldError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  /** Extra response headers, e.g. Retry-After or WWW-Authenticate. */
  readonly headers: Record<string, string>;
  constructor(
    code: ErrorCode,
    detail?: string,
    options: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail ?? TITLE[code]);
    this.name = 'HeraldError';
    this.code = code;
    this.status = STATUS[code];
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }
}

/** Builds the problem body for a code; 5xx bodies never carry internal detail. */
export function problem(code: ErrorCode, detail?: string, errors?: FieldError[]): Problem {
  const status = STATUS[code];
  const body: Problem = {
    type: `https://herald.dev/problems/${code.toLowerCase().replaceAll('_', '-')}`,
    title: TITLE[code],
    status,
    detail: status >= 500 && code === 'INTERNAL' ? TITLE[code] : (detail ?? TITLE[code]),
    code,
  };
  if (errors && errors.length > 0) body.errors = errors;
  return body;
}

export function statusOf(code: ErrorCode): number {
  return STATUS[code];
}
