/**
 * The browser's session: Herald's token pair in localStorage (README, "Authentication": no cookie, no
 * server-side session). Expiry is computed from `expires_in` against the browser's own clock at
 * receipt, so a skewed clock between browser and server does not matter.
 */
import { isOperator } from './contract.ts';

const KEY = 'herald.session';

/** Herald's token answer (login, refresh, OIDC callback). */
export interface TokenAnswer {
  access_token: string;
  expires_in: number;
  refresh_token: string;
  refresh_expires_in: number;
}

/** What is kept in localStorage. Times are epoch ms. */
export interface Session {
  accessToken: string;
  refreshToken: string;
  issuedAt: number;
  expiresAt: number;
  refreshExpiresAt: number;
}

/** Share of the access token's lifetime after which it is refreshed (before each call and by a timer). */
export const REFRESH_AT = 0.8;

export function saveSession(answer: TokenAnswer, now = Date.now()): Session {
  const session: Session = {
    accessToken: answer.access_token,
    refreshToken: answer.refresh_token,
    issuedAt: now,
    expiresAt: now + answer.expires_in * 1000,
    refreshExpiresAt: now + answer.refresh_expires_in * 1000,
  };
  localStorage.setItem(KEY, JSON.stringify(session));
  window.dispatchEvent(new Event('herald:session'));
  return session;
}

/** The stored session, or null when there is none, it is unreadable, or even its refresh token expired. */
export function loadSession(now = Date.now()): Session | null {
  let session: Session;
  try {
    session = JSON.parse(localStorage.getItem(KEY) ?? 'null') as Session;
  } catch {
    session = null as unknown as Session;
  }
  if (!session || typeof session.accessToken !== 'string' || typeof session.refreshToken !== 'string') {
    return null;
  }
  // Pure (it runs during render): the guard clears what is left of a dead session.
  if (now >= session.refreshExpiresAt && now >= session.expiresAt) return null;
  return session;
}

/** Logout: storage is cleared; the tokens simply expire (they are not revocable, by design). */
export function clearSession(): void {
  localStorage.removeItem(KEY);
  sessionStorage.clear();
  window.dispatchEvent(new Event('herald:session'));
}

/** When the access token should be replaced (80% of its lifetime). */
export function refreshDueAt(session: Session): number {
  return session.issuedAt + (session.expiresAt - session.issuedAt) * REFRESH_AT;
}

/** True while the access token can be used as is. */
export function accessUsable(session: Session, now = Date.now()): boolean {
  return now < refreshDueAt(session);
}

/** The claims of the access token, for display only (the server verifies; the browser never trusts these). */
export function tokenClaims(session: Session): { sub?: string; scope?: string; tid?: string; role?: string } {
  try {
    const payload = session.accessToken.split('.')[1] ?? '';
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    return JSON.parse(json) as { sub?: string; scope?: string; tid?: string; role?: string };
  } catch {
    return {};
  }
}

/**
 * Whether the signed-in caller operates Herald (tenant `default`): for display only, to leave out
 * what the API would refuse it (every tenant's metrics, pausing the queues every tenant shares).
 */
export function sessionIsOperator(): boolean {
  const session = loadSession();
  return session !== null && isOperator({ tenant: tokenClaims(session).tid ?? '' });
}

/** Whether the session's token carries `scope` (for what to show; the API enforces scopes itself). */
export function hasScope(scope: string): boolean {
  const session = loadSession();
  return session ? (tokenClaims(session).scope ?? '').split(' ').includes(scope) : false;
}
