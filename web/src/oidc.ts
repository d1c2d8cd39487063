import { ProblemError } from './api.ts';
import { saveSession, type TokenAnswer } from './session.ts';

/**
 * OpenID Connect sign-in from the browser: authorization code with PKCE S256. `state`, `nonce`
 * and the code verifier are made here and kept in sessionStorage (per tab, gone with the tab);
 * the auth service exchanges the code and checks the ID token (iss, aud, nonce, exp, algorithm).
 */
const KEY = 'herald.oidc';
/** A sign-in must come back within this time; a later callback is refused as expired. */
export const STATE_TTL_MS = 10 * 60 * 1000;

/** What GET /api/auth/oidc/config answers. */
export interface OidcConfig {
  enabled: boolean;
  authorizationEndpoint?: string;
  clientId?: string;
  scope?: string;
}

interface Pending {
  state: string;
  nonce: string;
  verifier: string;
  createdAt: number;
}

function random(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function redirectUri(): string {
  return `${window.location.origin}/oidc/callback`;
}

/** Starts the sign-in: stores state, nonce and verifier, then leaves for the identity provider. */
export async function beginSignIn(config: OidcConfig): Promise<void> {
  if (!config.enabled || !config.authorizationEndpoint || !config.clientId) {
    throw new Error('Single sign-on is not configured.');
  }
  const pending: Pending = { state: random(), nonce: random(), verifier: random(48), createdAt: Date.now() };
  sessionStorage.setItem(KEY, JSON.stringify(pending));
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending.verifier));
  const url = new URL(config.authorizationEndpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: config.clientId,
    redirect_uri: redirectUri(),
    scope: config.scope ?? 'openid email',
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: base64url(new Uint8Array(digest)),
    code_challenge_method: 'S256',
  }).toString();
  window.location.assign(url.toString());
}

/** Constant-time string comparison, so a guessed state leaks nothing through timing. */
function same(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Handles /oidc/callback. The state check comes before anything else, and the pending entry is
 * removed first, so a replayed callback (same URL again) finds nothing and is refused.
 */
export async function completeSignIn(params: URLSearchParams): Promise<void> {
  const raw = sessionStorage.getItem(KEY);
  sessionStorage.removeItem(KEY);
  const returned = params.get('state');
  let pending: Pending | null = null;
  try {
    pending = raw ? (JSON.parse(raw) as Pending) : null;
  } catch {
    pending = null;
  }
  if (!returned) throw new Error('The sign-in answer has no state: refused.');
  if (!pending)
    throw new Error('No sign-in is in progress in this tab (missing or replayed state): refused.');
  if (!same(returned, pending.state)) throw new Error('The sign-in state does not match: refused.');
  if (Date.now() - pending.createdAt > STATE_TTL_MS)
    throw new Error('The sign-in took too long (expired state).');
  const error = params.get('error');
  if (error) throw new Error(`The identity provider refused the sign-in (${error}).`);
  const code = params.get('code');
  if (!code) throw new Error('The sign-in answer has no code.');
  const response = await fetch('/api/auth/oidc/callback', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      code,
      code_verifier: pending.verifier,
      nonce: pending.nonce,
      redirect_uri: redirectUri(),
    }),
  });
  if (!response.ok) {
    const problem = await response.json().catch(() => ({}));
    throw new ProblemError({ ...problem, status: response.status });
  }
  saveSession((await response.json()) as TokenAnswer);
}
