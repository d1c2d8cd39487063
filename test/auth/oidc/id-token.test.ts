import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createLocalJWKSet, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { verifyIdToken } from '../../../src/auth/oidc/id-token.ts';
import type { ProviderMetadata } from '../../../src/auth/oidc/provider.ts';
import { HeraldError } from '../../../src/errors.ts';

const ISSUER = 'https://idp.example.com';
const CLIENT = 'herald-ui';
const NONCE = 'n-0123456789abcdef0123';
const NOW = 1_800_000_000;

describe('ID token validation (OIDC sign-in)', () => {
  let provider: ProviderMetadata;
  let sign: (claims: JWTPayload, alg?: string) => Promise<string>;

  before(async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' };
    provider = {
      issuer: ISSUER,
      authorizationEndpoint: `${ISSUER}/auth`,
      tokenEndpoint: `${ISSUER}/token`,
      algorithms: ['RS256'],
      jwks: createLocalJWKSet({ keys: [jwk] }),
    };
    sign = (claims) =>
      new SignJWT({
        iss: ISSUER,
        aud: CLIENT,
        sub: 'user-1',
        iat: NOW - 10,
        exp: NOW + 300,
        email: 'ada@example.com',
        email_verified: true,
        nonce: NONCE,
        ...claims,
      })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .sign(privateKey);
  });

  const verify = (token: string, nonce = NONCE) =>
    verifyIdToken(token, provider, { clientId: CLIENT, nonce, nowS: NOW });

  const refused = async (token: Promise<string> | string, nonce = NONCE) => {
    await assert.rejects(verify(await token, nonce), (error: unknown) => {
      assert.ok(error instanceof HeraldError);
      assert.equal(error.code, 'AUTH_INVALID_CREDENTIALS');
      return true;
    });
  };

  it('accepts a valid token and returns the identity and its verified email', async () => {
    assert.deepEqual(await verify(await sign({})), { iss: ISSUER, sub: 'user-1', email: 'ada@example.com' });
  });

  it('refuses another nonce (a replayed or injected token)', async () => {
    await refused(sign({}), 'n-someone-elses-nonce-000');
    await refused(sign({ nonce: undefined }));
  });

  it('refuses a token for another client or from another issuer', async () => {
    await refused(sign({ aud: 'other-client' }));
    await refused(sign({ iss: 'https://evil.example.com' }));
  });

  it('refuses several audiences unless azp names Herald', async () => {
    await refused(sign({ aud: [CLIENT, 'other'] }));
    assert.equal((await verify(await sign({ aud: [CLIENT, 'other'], azp: CLIENT }))).sub, 'user-1');
  });

  it('refuses an expired token beyond the 30 s tolerance', async () => {
    await refused(sign({ exp: NOW - 31 }));
    assert.equal((await verify(await sign({ exp: NOW - 20 }))).sub, 'user-1');
  });

  it('keeps an email only when the provider says it is verified', async () => {
    assert.equal((await verify(await sign({ email_verified: false }))).email, undefined);
    assert.deepEqual(await verify(await sign({ email: undefined })), { iss: ISSUER, sub: 'user-1' });
  });

  it('refuses alg none and HMAC tokens whatever they claim', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
    const body = Buffer.from(
      JSON.stringify({ iss: ISSUER, aud: CLIENT, sub: 'x', exp: NOW + 60, iat: NOW, nonce: NONCE }),
    ).toString('base64url');
    await refused(`${header}.${body}.`);
    const hmac = await new SignJWT({ nonce: NONCE, email: 'ada@example.com', email_verified: true })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .setAudience(CLIENT)
      .setSubject('x')
      .setIssuedAt(NOW)
      .setExpirationTime(NOW + 60)
      .sign(new TextEncoder().encode('the client secret, used as a key'));
    await refused(hmac);
  });

  it('refuses a token signed by a key the provider does not publish', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT({ nonce: NONCE, email: 'ada@example.com', email_verified: true })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(CLIENT)
      .setSubject('x')
      .setIssuedAt(NOW)
      .setExpirationTime(NOW + 60)
      .sign(privateKey);
    await refused(forged);
  });
});
