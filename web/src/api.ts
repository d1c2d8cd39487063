import {
  accessUsable,
  clearSession,
  loadSession,
  refreshDueAt,
  type Session,
  saveSession,
  type TokenAnswer,
} from './session.ts';

/** One field problem of a problem+json answer. */
export interface FieldError {
  path: string;
  message: string;
}

/** An RFC 9457 problem as the API answers it. */
export interface Problem {
  type?: string;
  title?: string;
  status: number;
  detail?: string;
  code?: string;
  errors?: FieldError[];
}

/** A non-2xx answer, with its problem body when it had one. */
export class ProblemError extends Error {
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${problem.status}`);
    this.problem = problem;
  }
}

/** Fired when the session ends for good (refresh refused): the app goes to the login page. */
export const SESSION_ENDED = 'herald:session-ended';

let refreshing: Promise<Session | null> | null = null;

/** Trades the refresh token for a new pair, once at a time however many calls wait for it. */
export function refreshSession(): Promise<Session | null> {
  refreshing ??= (async () => {
    const session = loadSession();
    if (!session) return null;
    try {
      const response = await fetch('/api/session/refresh', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: session.refreshToken }),
      });
      if (!response.ok) {
        endSession();
        return null;
      }
      return saveSession((await response.json()) as TokenAnswer);
    } catch {
      // A network failure is not a refusal: keep the session and let the caller fail.
      return session;
    }
  })().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

function endSession(): void {
  clearSession();
  window.dispatchEvent(new Event(SESSION_ENDED));
}

/** A usable session, refreshed first when 80% of the access token's life has passed. */
export async function usableSession(): Promise<Session | null> {
  const session = loadSession();
  if (!session) return null;
  if (accessUsable(session)) return session;
  return refreshSession();
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  /** Sent as If-None-Match; a 304 answer returns `notModified`. */
  etag?: string;
  /** Return the body as text (e.g. /metrics). */
  text?: boolean;
}

export interface CallResult<T> {
  status: number;
  data: T;
  etag: string | null;
  notModified: boolean;
}

/**
 * Calls the API through the gateway with the bearer token in the Authorization header (never in
 * the URL). The token's expiry is checked before the call; a 401 triggers one refresh and one retry.
 */
export async function call<T>(path: string, options: CallOptions = {}): Promise<CallResult<T>> {
  let session = await usableSession();
  if (!session) {
    endSession();
    throw new ProblemError({ status: 401, code: 'AUTH_INVALID_TOKEN', detail: 'Please sign in.' });
  }
  let response = await send(path, options, session);
  // Only a refused token (a Bearer challenge) means refresh and retry; another 401 (a wrong
  // current password) is an answer like any other.
  if (response.status === 401 && /^Bearer/i.test(response.headers.get('www-authenticate') ?? '')) {
    session = await refreshSession();
    if (!session)
      throw new ProblemError({ status: 401, code: 'AUTH_INVALID_TOKEN', detail: 'Please sign in.' });
    response = await send(path, options, session);
    if (response.status === 401) endSession();
  }
  return read<T>(response, options);
}

function send(path: string, options: CallOptions, session: Session): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${session.accessToken}` };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.etag) headers['if-none-match'] = options.etag;
  return fetch(`/api${path}`, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    cache: 'no-store',
  });
}

async function read<T>(response: Response, options: CallOptions): Promise<CallResult<T>> {
  const etag = response.headers.get('etag');
  if (response.status === 304) return { status: 304, data: undefined as T, etag, notModified: true };
  const type = response.headers.get('content-type') ?? '';
  if (!response.ok) {
    const problem = type.includes('json')
      ? ((await response.json()) as Problem)
      : { status: response.status, detail: response.statusText };
    throw new ProblemError({ ...problem, status: response.status });
  }
  if (response.status === 204) return { status: 204, data: undefined as T, etag, notModified: false };
  const data = options.text || !type.includes('json') ? await response.text() : await response.json();
  return { status: response.status, data: data as T, etag, notModified: false };
}

/** Shorthand: the body of a successful call. */
export async function get<T>(path: string): Promise<T> {
  return (await call<T>(path)).data;
}

/** Shorthand for POST/PUT/DELETE with a JSON body. */
export async function mutate<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await call<T>(path, { method, body })).data;
}

/** Password login through the gateway (POST /api/session → /auth/login). */
/**
 * Signs in through the gateway. `tenant` is needed only when the email and password sign in to
 * several tenants (the API then answers 400 naming body/tenant).
 */
export async function login(email: string, password: string, tenant?: string): Promise<Session> {
  const response = await fetch('/api/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(tenant ? { email, password, tenant } : { email, password }),
  });
  if (!response.ok) {
    const problem = ((await response.json().catch(() => ({}))) ?? {}) as Problem;
    throw new ProblemError({ ...problem, status: response.status });
  }
  return saveSession((await response.json()) as TokenAnswer);
}

/** Refreshes proactively at 80% of the access token's life, even while the user is idle. */
export function scheduleRefresh(): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const plan = () => {
    clearTimeout(timer);
    const session = loadSession();
    if (!session) return;
    const wait = Math.max(0, refreshDueAt(session) - Date.now());
    timer = setTimeout(() => void refreshSession(), wait);
  };
  plan();
  window.addEventListener('herald:session', plan);
  return () => {
    clearTimeout(timer);
    window.removeEventListener('herald:session', plan);
  };
}
