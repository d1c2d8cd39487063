/**
 * One JSON call to a running Herald's API with a bearer token, as a client makes it; the
 * answer's status and parsed body (undefined when empty).
 */
export async function apiCall(base: string, token: string, method: string, path: string, body?: object) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}
