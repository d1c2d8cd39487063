import type { Tokens } from './token.ts';

/** A refused or failed call: its HTTP status (0 when the network failed) and the problem's words. */
export class InboxError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Whether a `401` refuses the token itself (a Bearer challenge): then a new token may help. */
export function tokenRefused(response: Response): boolean {
  return response.status === 401 && /^Bearer/i.test(response.headers.get('www-authenticate') ?? '');
}

/**
 * The inbox API at `base` (the `api-url` attribute) with the recipient's token in the
 * `Authorization` header, never in a URL and never with cookies (`credentials: 'omit'`, so a
 * cross-origin API needs no credentialed CORS). A refused token is replaced once through the
 * host's `tokenProvider` and the call repeated.
 */
export class InboxApi {
  constructor(
    readonly base: string,
    private readonly tokens: Tokens,
  ) {}

  url(path: string): string {
    return `${this.base.replace(/\/+$/, '')}${path}`;
  }

  async send(path: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Response> {
    const attempt = async (token: string) =>
      fetch(this.url(path), {
        ...init,
        credentials: 'omit',
        cache: 'no-store',
        headers: { ...init.headers, authorization: `Bearer ${token}` },
      });
    let response = await attempt(await this.tokens.current());
    if (tokenRefused(response) && this.tokens.provider) {
      await response.body?.cancel();
      response = await attempt(await this.tokens.refresh());
    }
    return response;
  }

  async json<T>(method: string, path: string, keepalive = false): Promise<T> {
    let response: Response;
    try {
      response = await this.send(path, { method, keepalive, headers: { accept: 'application/json' } });
    } catch (error) {
      throw new InboxError(0, error instanceof Error ? error.message : String(error));
    }
    if (!response.ok) {
      const problem = (await response.json().catch(() => ({}))) as { detail?: string; title?: string };
      throw new InboxError(response.status, problem.detail ?? problem.title ?? `HTTP ${response.status}`);
    }
    return (await response.json()) as T;
  }
}
