import type { TokenProvider } from './types.ts';

/** Share of a token's lifetime after which a new one is asked for (the web UI's rule too). */
export const REFRESH_AT = 0.8;

/**
 * A token's lifetime in ms from its `iat` and `exp` claims (read for timing only: the server
 * verifies it), or null when it has no readable `exp`. The lifetime is counted from when the
 * element received the token, on the browser's own clock, so a skewed clock does not matter.
 */
export function tokenLifetime(token: string): number | null {
  try {
    const payload = token.split('.')[1] ?? '';
    const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as {
      exp?: unknown;
      iat?: unknown;
    };
    if (typeof claims.exp !== 'number') return null;
    const iat = typeof claims.iat === 'number' ? claims.iat : Date.now() / 1000;
    return Math.max(0, (claims.exp - iat) * 1000);
  } catch {
    return null;
  }
}

/**
 * The element's token: the one the host gave, replaced through the host's `tokenProvider`
 * before it expires (at REFRESH_AT of its life, by a timer) and whenever the API refuses it.
 * One refresh at a time however many callers wait for it.
 */
export class Tokens {
  private token: string | null = null;
  private dueAt = Number.POSITIVE_INFINITY;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private refreshing: Promise<string> | null = null;
  provider: TokenProvider | null = null;

  constructor(private readonly onError: (error: unknown) => void) {}

  get value(): string | null {
    return this.token;
  }

  set(token: string | null): void {
    this.token = token || null;
    clearTimeout(this.timer);
    this.dueAt = Number.POSITIVE_INFINITY;
    if (!this.token) return;
    const lifetime = tokenLifetime(this.token);
    if (lifetime === null) return;
    this.dueAt = Date.now() + lifetime * REFRESH_AT;
    this.schedule();
  }

  /** Whether a token is there or can be had. */
  get usable(): boolean {
    return this.token !== null || this.provider !== null;
  }

  /** A token to send: the current one, or a new one when it is due (or missing) and a provider is set. */
  async current(): Promise<string> {
    if (this.provider && (this.token === null || Date.now() >= this.dueAt)) return this.refresh();
    if (this.token === null) throw new Error('herald-inbox: no token');
    return this.token;
  }

  /** Asks the provider for a new token (after a 401, or when due). Without a provider: the current one. */
  refresh(): Promise<string> {
    const provider = this.provider;
    if (!provider) return this.current();
    this.refreshing ??= (async () => {
      try {
        const token = await provider();
        if (typeof token !== 'string' || token === '')
          throw new Error('herald-inbox: tokenProvider gave no token');
        this.set(token);
        return token;
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Resumes the refresh timer after stop() (the element was put back into a document). */
  resume(): void {
    if (this.token && this.dueAt !== Number.POSITIVE_INFINITY) this.schedule();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    // setTimeout's delay is a 32-bit count of ms: a longer wait is cut into steps.
    const wait = Math.min(Math.max(0, this.dueAt - Date.now()), 2 ** 31 - 1);
    this.timer = setTimeout(() => {
      if (Date.now() < this.dueAt) this.schedule();
      else if (this.provider) this.refresh().catch(this.onError);
    }, wait);
  }
}
