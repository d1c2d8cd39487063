import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createClient } from '../../src/auth/accounts.ts';
import { loggerOptions } from '../../src/http/logger.ts';
import type { App } from '../../src/http/types.ts';
import type { HeraldDeps } from '../../src/main.ts';
import { buildApi, createDeps } from '../../src/main.ts';
import { createUser } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';

const PASSWORD = 'log-test-password-8c1f';
const WRONG = 'wrong-password-2b7e';

describe('logs', () => {
  let deps: HeraldDeps;
  let app: App;
  const lines: string[] = [];
  before(async () => {
    deps = await createDeps(testConfig({ HERALD_ROLES: 'auth,api' }));
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    // The app's own logger options, at the most verbose level, into a buffer.
    app = await buildApi(deps, { logger: { ...loggerOptions('trace'), stream } });
    await createUser(deps, { email: 'logs@example.com', password: PASSWORD });
  });
  after(async () => {
    await app.close();
    await deps.store.close();
  });

  it('never contain a password, token or client secret after logins, refreshes and client grants', async () => {
    const ok = await app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'logs@example.com', password: PASSWORD },
    });
    assert.equal(ok.statusCode, 200);
    const failed = await app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'logs@example.com', password: WRONG },
    });
    assert.equal(failed.statusCode, 401);
    const { access_token: access, refresh_token: refresh } = ok.json();
    const refreshed = await app.inject({
      method: 'POST',
      url: '/auth/refresh',
      payload: { refresh_token: refresh },
    });
    await app.inject({
      method: 'GET',
      url: `/auth/me?access_token=${access}`,
      headers: { authorization: `Bearer ${access}` },
    });
    await app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${access}x` } });
    const { client, secret } = await createClient(deps.store.auth, deps.clock, deps.auth.clientSecrets, {
      name: 'l',
      scopes: ['admin'],
      tenant: 'default',
    });
    const granted = await app.inject({
      method: 'POST',
      url: '/auth/token',
      payload: { grant_type: 'client_credentials', client_id: client.id, client_secret: secret },
    });
    await app.inject({
      method: 'POST',
      url: '/auth/token',
      payload: { grant_type: 'client_credentials', client_id: client.id, client_secret: `${secret}x` },
    });

    const log = lines.join('');
    assert.ok(lines.length > 5, 'the logger wrote request lines');
    assert.match(log, /\/auth\/login/);
    const secrets = [
      PASSWORD,
      WRONG,
      access,
      refresh,
      secret,
      refreshed.json().access_token,
      granted.json().access_token,
    ];
    for (const value of secrets) {
      assert.equal(log.includes(value), false, `log leaks ${value.slice(0, 12)}…`);
      // No part of a JWT either (its signature is the secret-bearing part).
      if (value.includes('.')) assert.equal(log.includes(value.split('.')[2] as string), false);
    }
  });
});
