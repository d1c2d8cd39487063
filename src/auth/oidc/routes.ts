import { Type } from '@sinclair/typebox';
import { HeraldError } from '../../errors.ts';
import { withExample } from '../../http/examples.ts';
import { describedPattern } from '../../http/field-messages.ts';
import type { RouteModule } from '../../http/types.ts';
import type { UserRecord } from '../../store/port/auth.ts';
import { normalizeEmail } from '../accounts.ts';
import { clientAddress, trustedProxies } from '../client-address.ts';
import { DEFAULT_TENANT } from '../principal.ts';
import { TokenPair } from '../schemas.ts';
import type { AuthDeps } from '../service.ts';
import { sendTokenPair } from '../token-pair.ts';
import { exchangeCode } from './exchange.ts';
import { type Identity, userinfoEmail, verifyIdToken } from './id-token.ts';
import { createProvider } from './provider.ts';

/** POST /auth/oidc/callback body: what the browser kept in sessionStorage, plus the code it got. */
const CallbackBody = withExample(
  Type.Object(
    {
      code: Type.String({ minLength: 1, maxLength: 2048 }),
      // RFC 7636 section 4.1: 43 to 128 unreserved characters.
      code_verifier: Type.String({
        pattern: describedPattern(
          '^[A-Za-z0-9._~-]{43,128}$',
          'must be 43 to 128 letters, digits or the characters . _ ~ -',
        ),
      }),
      nonce: Type.String({ minLength: 16, maxLength: 256 }),
      redirect_uri: Type.String({
        minLength: 1,
        maxLength: 2048,
        pattern: describedPattern(
          '^https?://[^?#]+/oidc/callback$',
          'must be a URL ending in /oidc/callback',
        ),
      }),
    },
    { additionalProperties: false },
  ),
  {
    code: 'SplxlOBeZQQYbYS6WxSbIA',
    code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    nonce: 'n-0S6_WzA2Mj-8f3kq',
    redirect_uri: 'https://herald.example.com/oidc/callback',
  },
);

const OidcConfigView = Type.Object({
  enabled: Type.Boolean(),
  authorizationEndpoint: Type.Optional(Type.String()),
  clientId: Type.Optional(Type.String()),
  scope: Type.Optional(Type.String()),
});

/**
 * Sign-in through an external OpenID provider (README, "Sign-in with an OpenID provider"), public routes of the auth role:
 * `GET /auth/oidc/config` tells the UI where to send the browser; `POST /auth/oidc/callback`
 * exchanges the code (with the PKCE verifier), validates the ID token, maps the identity to an
 * enabled Herald user (linked by issuer and subject; by verified email at the first sign-in), and
 * answers Herald's own token pair exactly as login does. Identities are linked to users of one
 * tenant only, HERALD_OIDC_TENANT. No user is created on the fly: an identity without a Herald
 * account is refused.
 */
export const oidcRoutes: RouteModule<AuthDeps> = (app, deps) => {
  const oidc = deps.config.auth.oidc;
  const provider = oidc ? createProvider(oidc.issuer) : undefined;
  const nowS = () => Math.floor(deps.clock.now() / 1000);
  const store = deps.store.auth;
  const isTrusted = trustedProxies(deps.config.trustedProxies);
  const refused = (detail: string) => new HeraldError('AUTH_INVALID_CREDENTIALS', detail);
  const oidcTenant = oidc?.tenant ?? DEFAULT_TENANT;

  /**
   * The Herald user of an identity: the one linked to (iss, sub); at the first sign-in, the
   * enabled user of tenant HERALD_OIDC_TENANT with the verified email (from the ID token, else
   * userinfo), which is then linked. Only that tenant: another tenant's admin may create a user of
   * any email, and must not receive that address's sign-ins (#46). A link to a user outside it
   * (made before, or under another HERALD_OIDC_TENANT) is dropped and the sign-in links afresh.
   * A user already linked to another identity at this issuer is not taken over by a second one
   * that happens to show the same email.
   */
  async function userOf(
    identity: Identity,
    fetchEmail: () => Promise<string | undefined>,
  ): Promise<UserRecord> {
    const linked = await store.findUserByIdentity(identity.iss, identity.sub);
    if (linked && linked.tenant === oidcTenant) {
      if (linked.disabled) throw refused('This Herald user is disabled.');
      return linked;
    }
    if (linked) await store.unlinkIdentity(identity.iss, identity.sub);
    const email = identity.email ?? (await fetchEmail());
    if (!email) throw refused('The identity provider did not assert a verified email.');
    const user = await store.findUserByEmail(normalizeEmail(email), oidcTenant);
    if (!user || user.disabled) throw refused('No enabled Herald user has this email.');
    if (!(await store.linkIdentity(identity.iss, identity.sub, user.id, deps.clock.now()))) {
      // A concurrent first sign-in of the same identity may have linked it a moment ago.
      const now = await store.findUserByIdentity(identity.iss, identity.sub);
      if (now?.id !== user.id)
        throw refused('This Herald user is linked to another identity at the identity provider.');
    }
    return user;
  }

  app.get(
    '/auth/oidc/config',
    {
      schema: {
        tags: ['auth'],
        summary: 'External sign-in settings for the UI',
        description:
          'Public: whether sign-in with an OpenID provider is configured (HERALD_OIDC_ISSUER), and where the browser sends the user to sign in.',
        response: {
          200: withExample(OidcConfigView, {
            enabled: true,
            authorizationEndpoint: 'https://id.example.com/authorize',
            clientId: 'herald-ui',
            scope: 'openid email',
          }),
        },
      },
    },
    async () => {
      if (!oidc || !provider) return { enabled: false };
      const metadata = await provider();
      return {
        enabled: true,
        authorizationEndpoint: metadata.authorizationEndpoint,
        clientId: oidc.clientId,
        scope: 'openid email',
      };
    },
  );

  app.post(
    '/auth/oidc/callback',
    {
      schema: {
        tags: ['auth'],
        summary: 'Exchange an OpenID Connect authorization code for Herald tokens',
        description:
          'The browser posts the code the provider gave it, with its PKCE verifier and nonce. Herald exchanges the code, checks the ID token and answers the same token pair as POST /auth/login for the linked user (no account is created). Throttled per client address like a login.',
        body: CallbackBody,
        response: { 200: TokenPair },
      },
    },
    async (request, reply) => {
      if (!oidc || !provider) throw new HeraldError('NOT_FOUND', 'External sign-in is not configured.');
      // Counted before the code is exchanged, like a login; uncounted when the sign-in succeeds.
      const address = clientAddress(request, isTrusted);
      const attempt = await deps.auth.throttles.oidc.attempt(address, address);
      const metadata = await provider();
      const tokens = await exchangeCode(metadata.tokenEndpoint, oidc, {
        code: request.body.code,
        codeVerifier: request.body.code_verifier,
        redirectUri: request.body.redirect_uri,
      });
      const identity = await verifyIdToken(tokens.idToken, metadata, {
        clientId: oidc.clientId,
        nonce: request.body.nonce,
        nowS: nowS(),
      });
      const user = await userOf(identity, () =>
        userinfoEmail(metadata.userinfoEndpoint, tokens.accessToken, identity),
      );
      await attempt.uncount();
      request.log.info({ user: user.id }, 'signed in through the identity provider');
      // The absolute refresh cap counts from this sign-in, as from a password login.
      return sendTokenPair(reply, deps.auth.tokens, user, deps.clock.now());
    },
  );
};
