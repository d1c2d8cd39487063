import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Provider from 'oidc-provider';

/** A real OpenID provider (the `oidc-provider` package) on a local port, for sign-in tests. */
export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /**
   * What the provider says about an account (by login, which is its `sub`): its email, and
   * whether it tells it only at the userinfo endpoint. By default the login is the email, in the
   * ID token.
   */
  accounts: Map<string, { email: string; userinfoOnly?: boolean }>;
  /** Registers the client once the redirect URI (the gateway's address) is known. */
  configure(redirectUri: string): void;
  close(): Promise<void>;
}

/**
 * Starts the provider's HTTP server first (so its issuer URL, with the port, can go into Herald's
 * config), then builds the provider when `configure` names the redirect URI. Its development
 * login form accepts any login; the login becomes the account's verified email.
 */
export async function startIdp(): Promise<TestIdp> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server = createServer((req, res) => {
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new TypeError('not listening');
  const issuer = `http://127.0.0.1:${address.port}`;
  const clientId = 'herald-ui';
  const clientSecret = randomBytes(24).toString('base64url');
  const accounts = new Map<string, { email: string; userinfoOnly?: boolean }>();
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    configure(redirectUri: string) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: clientId,
            client_secret: clientSecret,
            redirect_uris: [redirectUri],
            response_types: ['code'],
            grant_types: ['authorization_code'],
            token_endpoint_auth_method: 'client_secret_basic',
          },
        ],
        async findAccount(_ctx: unknown, id: string) {
          return {
            accountId: id,
            async claims(use: string) {
              const account = accounts.get(id) ?? { email: id };
              if (account.userinfoOnly && use === 'id_token') return { sub: id };
              return { sub: id, email: account.email, email_verified: true };
            },
          };
        },
        claims: { openid: ['sub'], email: ['email', 'email_verified'] },
        // Put the email claims in the ID token itself, unless the account says userinfo only.
        conformIdTokenClaims: false,
        pkce: { required: () => true },
        cookies: { keys: [randomBytes(32).toString('hex')] },
        features: { devInteractions: { enabled: true } },
      });
      handler = provider.callback();
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
