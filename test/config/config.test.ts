import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

describe('config', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    assert.equal(config.apiPort, 8080);
    assert.equal(config.gatewayPort, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.deepEqual(config.roles, ['auth', 'api', 'worker', 'gateway']);
    assert.equal(config.auth.accessTtl, 600);
    assert.equal(config.auth.refreshTtl, 43200);
    assert.equal(config.dispatch.leaseMs, 30000);
    assert.equal(config.dispatch.retryMaxAttempts, 8);
    assert.deepEqual(config.trustedProxies, ['127.0.0.1', '::1']);
    assert.equal(config.requestTimeoutMs, 30_000);
    assert.equal(config.providers.sandboxFailures, false, 'failure injection is opt-in');
  });

  it('fails fast naming the variable', () => {
    assert.throws(
      () => loadConfig({ HERALD_API_PORT: 'eighty' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.variable, 'HERALD_API_PORT');
        assert.match(error.message, /HERALD_API_PORT/);
        return true;
      },
    );
    assert.throws(() => loadConfig({ HERALD_ROLES: 'api,mailer' }), /HERALD_ROLES/);
    assert.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /DATABASE_URL/);
    assert.throws(() => loadConfig({ SMTP_URL: 'smtp://localhost:25' }), /EMAIL_FROM/);
    assert.throws(() => loadConfig({ HERALD_ACCESS_TTL: '0' }), /HERALD_ACCESS_TTL/);
  });

  it('accepts an access TTL of one second', () => {
    assert.equal(loadConfig({ HERALD_ACCESS_TTL: '1' }).auth.accessTtl, 1);
  });

  it('does not echo credentials of a bad URL', () => {
    assert.throws(
      () => loadConfig({ SMTP_URL: 'smtp://user:secret@ bad' }),
      (error: Error) => {
        assert.doesNotMatch(error.message, /secret/);
        return true;
      },
    );
  });
});
