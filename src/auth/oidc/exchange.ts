import { HeraldError } from '../../errors.ts';

/** The client Herald is at the identity provider. */
export interface OidcClient {
  clientId: string;
  clientSecret?: string;
}

/**
 * Trades the authorization code for tokens at the provider's token endpoint (RFC 6749 section
 * 4.1.3, with the PKCE verifier of RFC 7636). A confidential client authenticates with HTTP Basic
 * (client_secret_basic); a public one sends only its client_id.
 */
export async function exchangeCode(
  tokenEndpoint: string,
  client: OidcClient,
  grant: { code: string; codeVerifier: string; redirectUri: string },
): Promise<{ idToken: string; accessToken?: string }> {
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code: grant.code,
    code_verifier: grant.codeVerifier,
    redirect_uri: grant.redirectUri,
  });
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (client.clientSecret) {
    const encode = (s: string) => encodeURIComponent(s);
    const basic = Buffer.from(`${encode(client.clientId)}:${encode(client.clientSecret)}`).toString('base64');
    headers.authorization = `Basic ${basic}`;
  } else {
    body.set('client_id', client.clientId);
  }
  let response: Response;
  try {
    response = await fetch(tokenEndpoint, {
      method: 'POST',
      headers,
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(10_000),
    });
  } catch {
    throw new HeraldError('BAD_GATEWAY', 'The identity provider cannot be reached.');
  }
  const answer = (await response.json().catch(() => ({}))) as { id_token?: unknown; access_token?: unknown };
  if (!response.ok || typeof answer.id_token !== 'string') {
    // invalid_grant: a used, expired or forged code, or a verifier that does not match.
    throw new HeraldError('AUTH_INVALID_CREDENTIALS', 'The identity provider refused the sign-in code.');
  }
  // The access token serves only to read the userinfo endpoint, when the ID token has no email.
  const accessToken = typeof answer.access_token === 'string' ? answer.access_token : undefined;
  return { idToken: answer.id_token, ...(accessToken ? { accessToken } : {}) };
}
