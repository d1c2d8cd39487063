import { ADMIN } from './herald.ts';

/** Thrown when a scenario needs a part of Herald that has not landed yet (a 404 route, a missing module). */
export class Unavailable extends Error {
  override name = 'Unavailable';
}

/** A small client for Herald's HTTP API, used for set-up and checks (not for the timed load). */
export interface Api {
  url: string;
  token: string;
  auth: Record<string, string>;
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
}

async function call(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // keep the text
  }
  return { status: response.status, body: parsed };
}

/** Logs in over HTTP (POST /auth/login), as a user would: the bootstrap admin unless told. */
export async function login(url: string, user: { email: string; password: string } = ADMIN): Promise<Api> {
  const { status, body } = await call(url, 'POST', '/auth/login', {}, user);
  if (status === 404) throw new Unavailable('POST /auth/login answers 404 (auth service not built yet)');
  const token = (body as { access_token?: string } | undefined)?.access_token;
  if (status !== 200 || !token) throw new Error(`login failed: ${status} ${JSON.stringify(body)}`);
  return withBase(token, url);
}

/** A client for `url` with a token obtained elsewhere (the auth process of a scale-out layout). */
export function withBase(token: string, url: string): Api {
  const auth = { authorization: `Bearer ${token}` };
  return { url, token, auth, request: (method, path, payload) => call(url, method, path, auth, payload) };
}

/** Checks that a route exists (anything but 404 or 405) and that the token is accepted. */
export async function requireRoute(api: Api, method: string, path: string, body: unknown, what: string) {
  const response = await api.request(method, path, body);
  if (response.status === 404 || response.status === 405) {
    throw new Unavailable(`${method} ${path} answers ${response.status} (${what} not built yet)`);
  }
  if (response.status === 401 || response.status === 403) {
    throw new Error(
      `${method} ${path} refused the admin token: ${response.status} ${JSON.stringify(response.body)}`,
    );
  }
  return response;
}

/** One row of GET /admin/queues. */
export interface QueueRow {
  priority: string;
  channel: string;
  depth: number;
  oldestAgeMs: number | null;
  inFlight: number;
  paused: boolean;
}

/** GET /admin/queues, or Unavailable when the scheduler's admin route is not there. */
export async function queues(api: Api): Promise<QueueRow[]> {
  const response = await requireRoute(api, 'GET', '/admin/queues', undefined, 'the queue admin route');
  if (response.status !== 200) throw new Error(`GET /admin/queues: ${response.status}`);
  return (response.body as { queues: QueueRow[] }).queues;
}

/** Waiting plus in-flight notifications over all queues. */
export function outstanding(rows: readonly QueueRow[]): number {
  return rows.reduce((sum, row) => sum + row.depth + row.inFlight, 0);
}

/** POST /admin/queues/pause or resume for everything; false when the route does not exist. */
export async function setPaused(api: Api, paused: boolean): Promise<boolean> {
  const response = await api.request('POST', `/admin/queues/${paused ? 'pause' : 'resume'}`, {});
  if (response.status === 404) return false;
  if (response.status !== 200) throw new Error(`queues ${paused ? 'pause' : 'resume'}: ${response.status}`);
  return true;
}

/** A notification as GET /notifications/{id} answers it (the fields the bench reads). */
export interface NotificationView {
  notificationId: string;
  status: string;
  priority: string;
  createdAt: string;
  events: Array<{ type: string; at: string; attempt?: number; provider?: string }>;
}

export async function getNotification(api: Api, id: string): Promise<NotificationView> {
  const response = await api.request('GET', `/notifications/${id}`);
  if (response.status !== 200) throw new Error(`GET /notifications/${id}: ${response.status}`);
  return response.body as NotificationView;
}
