import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/http/app.ts';
import type { App } from '../../src/http/types.ts';
import type { HeraldDeps } from '../../src/main.ts';
import { buildApi, createDeps } from '../../src/main.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';

/**
 * Protected routes open to any valid token, whatever its scopes: the caller asking who it is,
 * signing itself out everywhere, changing its own password.
 */
const ANY_SCOPE = new Set(['GET /auth/me', 'POST /auth/logout-all', 'POST /auth/password']);

/**
 * The public routes of the contract (README, "Authentication"). Every other route must answer 401
 * without a token; a route added later outside the protected scope fails this test.
 */
const PUBLIC: Array<[method: string, path: RegExp]> = [
  ['POST', /^\/auth\/(login|refresh|token)$/],
  ['GET', /^\/\.well-known\/jwks\.json$/],
  ['GET', /^\/(health|ready)$/],
  // The OpenAPI document, its UI and the UI's static assets hold no data.
  ['GET', /^\/docs(\/.*)?$/],
  // Authenticated by the provider's signature instead.
  ['POST', /^\/webhooks\/[^/]+$/],
  // OpenID Connect sign-in: it runs before the caller has a token and
  // answers with Herald's tokens as login does; the config route holds only public settings.
  ['GET', /^\/auth\/oidc\/config$/],
  ['POST', /^\/auth\/oidc\/callback$/],
  // Whether the first admin is still to be made: a boolean for the sign-in page, nothing of any user.
  ['GET', /^\/auth\/setup$/],
  ['HEAD', /^\/auth\/setup$/],
  // One-click unsubscribe (RFC 8058): the link's authenticated token is the credential.
  ['GET', /^\/unsubscribe\/[^/]+$/],
  ['HEAD', /^\/unsubscribe\/[^/]+$/],
  ['POST', /^\/unsubscribe\/[^/]+$/],
  // The recipient's preferences page (docs/recipients.md): the link's MAC token is the credential.
  ['GET', /^\/preferences\/[^/]+$/],
  ['HEAD', /^\/preferences\/[^/]+$/],
  ['POST', /^\/preferences\/[^/]+$/],
  // CORS preflights of the inbox (docs/inbox-api.md#cors): browsers send them without credentials.
  ['OPTIONS', /^\/inbox(\/.*|\*)?$/],
];

/**
 * Every route in `printRoutes` (the router's own tree), which also lists routes registered
 * before any hook could see them (the docs UI). Lines look like `│   ├── /segment (GET, HEAD)`;
 * each level of indent is 4 characters and a segment continues its parent's path.
 */
function routesFromTree(tree: string): Array<{ method: string; url: string }> {
  const parents: string[] = [];
  const found: Array<{ method: string; url: string }> = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:[│ ] {3})*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    const url = (parents[depth - 1] ?? '') + (match[2] ?? '');
    parents[depth] = url;
    for (const method of (match[3] ?? '').split(', ').filter(Boolean)) found.push({ method, url });
  }
  return found;
}

function isPublic(method: string, url: string): boolean {
  const asGet = method === 'HEAD' ? 'GET' : method;
  return PUBLIC.some(([m, path]) => m === asGet && path.test(url));
}

describe('route coverage', () => {
  let app: App;
  let deps: HeraldDeps;
  const routes: Array<{ method: string; url: string }> = [];

  before(async () => {
    deps = await createDeps(testConfig({ HERALD_ROLES: 'auth,api,worker,gateway' }));
    // The same app `herald start` serves: buildApi adds modules beyond apiModules (metrics).
    app = await buildApi(deps);
    await app.ready();
    routes.push(...routesFromTree(app.printRoutes({ commonPrefix: false })));
  });
  after(async () => {
    await app.close();
    await deps.store.close();
  });

  it('finds the routes of every role', () => {
    const urls = new Set(routes.map((route) => `${route.method} ${route.url}`));
    const expectations = [
      'POST /auth/login',
      'GET /auth/me',
      'POST /admin/users/:id/disable',
      'GET /.well-known/jwks.json',
      'GET /docs/json',
      'GET /health',
    ];
    for (const expected of expectations) {
      assert.ok(urls.has(expected), expected);
    }
  });

  it('answers 401 without a token on every route the contract does not list as public', async () => {
    const { unprotected, checked } = await unprotectedRoutes(app, routes);
    assert.deepEqual(unprotected, []);
    assert.ok(checked > 3);
  });

  it('finds a required scope on every protected route but the allow-listed ones', async () => {
    // A valid token with no scope at all: a route that names its scope answers 403 before its
    // handler runs; one that forgot it would answer something else (200, 400, 404...).
    const bare = { authorization: `Bearer ${await tokenFor(deps, { scopes: [] })}` };
    const unscoped: string[] = [];
    for (const { method, url } of routes) {
      if (isPublic(method, url) || ANY_SCOPE.has(`${method === 'HEAD' ? 'GET' : method} ${url}`)) continue;
      const path = url.replace(/:[^/]+/g, 'x').replace(/\*/g, 'x');
      const response = await app.inject({ method: method as 'GET', url: path, headers: bare });
      if (response.statusCode !== 403) unscoped.push(`${method} ${url} -> ${response.statusCode}`);
    }
    assert.deepEqual(unscoped, []);
  });

  it('would catch a route added outside the protected scope', async () => {
    const leaky = await buildApp({
      logLevel: 'silent',
      bodyLimit: deps.config.bodyLimit,
      requestTimeoutMs: 30_000,
      public: [
        (scope) => {
          scope.get('/admin/leak', async () => ({ secret: true }));
        },
      ],
      protected: [],
      protect: () => {},
    });
    try {
      await leaky.ready();
      const { unprotected } = await unprotectedRoutes(
        leaky,
        routesFromTree(leaky.printRoutes({ commonPrefix: false })),
      );
      assert.deepEqual(unprotected, ['GET /admin/leak -> 200', 'HEAD /admin/leak -> 200']);
    } finally {
      await leaky.close();
    }
  });
});

/** Calls every non-public route without a token; lists those not answering 401 with a Bearer challenge. */
async function unprotectedRoutes(app: App, routes: Array<{ method: string; url: string }>) {
  const unprotected: string[] = [];
  let checked = 0;
  for (const { method, url } of routes) {
    if (isPublic(method, url)) continue;
    const path = url.replace(/:[^/]+/g, 'x').replace(/\*/g, 'x');
    const response = await app.inject({ method: method as 'GET', url: path });
    checked += 1;
    if (response.statusCode !== 401 || !String(response.headers['www-authenticate']).startsWith('Bearer')) {
      unprotected.push(`${method} ${url} -> ${response.statusCode}`);
    }
  }
  return { unprotected, checked };
}
