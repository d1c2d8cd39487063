import { isLoopbackHost } from '../outbound.ts';

/** Pool and rate settings of the SMTP provider, read from SMTP_URL's query string. */
export interface SmtpPoolOptions {
  host: string;
  port: number;
  secure: boolean;
  auth: { user: string; pass: string } | undefined;
  /** Parallel SMTP connections the pool keeps (also the scheduler's concurrency for smtp). */
  maxConnections: number;
  /** Messages per second across the pool; 0 for no limit. */
  ratePerSecond: number;
  /** Messages one connection sends before it is recycled. */
  maxMessages: number;
  /**
   * STARTTLS is required before credentials are sent (docs/providers.md): with a user on `smtp://`,
   * unless the host is a loopback address or the URL says `?tls=optional`.
   */
  requireTLS: boolean;
}

const intParam = (url: URL, name: string, fallback: number, min: number, max: number): number => {
  const raw = url.searchParams.get(name);
  if (raw === null) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`SMTP_URL ${name} must be a whole number from ${min} to ${max}`);
  }
  return value;
};

/**
 * Parses `smtp://user:pass@host:port?maxConnections=5&rateLimit=10` (or `smtps://` for TLS from
 * the first byte). Plain `smtp://` upgrades with STARTTLS when the server offers it, and must
 * (requireTLS) when it carries credentials to a host that is not loopback; `?tls=optional` lifts
 * that, `?tls=required` asks it without credentials too.
 */
export function parseSmtpUrl(raw: string): SmtpPoolOptions {
  const url = new URL(raw);
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new TypeError('SMTP_URL must start with smtp:// or smtps://');
  }
  const secure = url.protocol === 'smtps:';
  const user = decodeURIComponent(url.username);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const tls = url.searchParams.get('tls');
  if (tls !== null && tls !== 'optional' && tls !== 'required') {
    throw new TypeError('SMTP_URL tls must be optional or required');
  }
  return {
    host,
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    auth: user ? { user, pass: decodeURIComponent(url.password) } : undefined,
    maxConnections: intParam(url, 'maxConnections', 5, 1, 100),
    ratePerSecond: intParam(url, 'rateLimit', 20, 0, 100_000),
    maxMessages: intParam(url, 'maxMessages', 100, 1, 1_000_000),
    requireTLS:
      !secure && (tls === 'required' || (user !== '' && tls !== 'optional' && !isLoopbackHost(host))),
  };
}

/** The domain of EMAIL_FROM (`Herald <noreply@example.com>` or a bare address), for Message-IDs. */
export function fromDomain(from: string): string {
  const match = /@([A-Za-z0-9.-]+)/.exec(from);
  return match?.[1] ?? 'herald.invalid';
}
