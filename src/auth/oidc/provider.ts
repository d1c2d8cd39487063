import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import { HeraldError } from '../../errors.ts';

/**
 * ID token algorithms Herald accepts, pinned: asymmetric only. `none` and the HMAC family
 * (which would make the client secret a signing key) are never accepted, whatever the provider
 * advertises.
 */
const PINNED_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;

/** The parts of the provider's discovery document Herald uses. */
export interface ProviderMetadata {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userinfoEndpoint?: string;
  algorithms: string[];
  jwks: JWTVerifyGetKey;
}

/** How long the discovery document is reused before it is fetched again. */
const METADATA_TTL_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 5_000;

/**
 * Discovery of one OpenID provider (OpenID Connect Discovery 1.0), cached. The document's
 * `issuer` must equal the configured issuer exactly (section 4.3), or nothing is trusted.
 */
export function createProvider(issuer: string): () => Promise<ProviderMetadata> {
  let cached: { at: number; metadata: ProviderMetadata } | undefined;
  return async () => {
    if (cached && Date.now() - cached.at < METADATA_TTL_MS) return cached.metadata;
    const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let doc: Record<string, unknown>;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
      if (!response.ok) throw new Error(`discovery answered ${response.status}`);
      doc = (await response.json()) as Record<string, unknown>;
    } catch {
      throw new HeraldError('BAD_GATEWAY', 'The identity provider cannot be reached.');
    }
    if (doc.issuer !== issuer) {
      throw new HeraldError('BAD_GATEWAY', 'The identity provider names another issuer.');
    }
    const advertised = Array.isArray(doc.id_token_signing_alg_values_supported)
      ? (doc.id_token_signing_alg_values_supported as string[])
      : ['RS256'];
    const metadata: ProviderMetadata = {
      issuer,
      authorizationEndpoint: String(doc.authorization_endpoint),
      tokenEndpoint: String(doc.token_endpoint),
      ...(typeof doc.userinfo_endpoint === 'string' ? { userinfoEndpoint: doc.userinfo_endpoint } : {}),
      algorithms: PINNED_ALGS.filter((alg) => advertised.includes(alg)),
      jwks: createRemoteJWKSet(new URL(String(doc.jwks_uri)), { timeoutDuration: FETCH_TIMEOUT_MS }),
    };
    cached = { at: Date.now(), metadata };
    return metadata;
  };
}
