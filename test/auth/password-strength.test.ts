// One rule for every way a password is set (README, "Authentication"; ASVS 2.1.7): at least 12
// characters, not on the common and breached list @zxcvbn-ts/language-common ships (read
// offline), not one character or a short group repeated, not a run like 123456789012.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bootstrapAdmin } from '../../src/auth/accounts.ts';
import { passwordProblem } from '../../src/auth/password-rules.ts';
import { main } from '../../src/cli/main.ts';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { authHeader, authTestApp, createUser, loginAs } from '../helpers/auth.ts';
import { tempDir } from '../helpers/config.ts';

/** The three, and what the list (case aside) and the two patterns stand for. */
const WEAK = ['password1234', 'aaaaaaaaaaaa', '123456789012'];
const PASSWORD = 'correct horse battery staple';

describe('passwordProblem', () => {
  it('refuses the common and breached list, case aside, repeats and runs, naming the rule', () => {
    assert.match(passwordProblem('password1234') ?? '', /commonly used/);
    assert.match(passwordProblem('Password1234') ?? '', /commonly used/);
    assert.match(passwordProblem('qwertyuiop12') ?? '', /commonly used/);
    assert.match(passwordProblem('aaaaaaaaaaaa') ?? '', /repeat/);
    assert.match(passwordProblem('abcabcabcabc') ?? '', /repeat/);
    assert.match(passwordProblem('123456789012') ?? '', /commonly used|run/);
    for (const run of ['234567890123', '098765432109', 'abcdefghijkl', 'ZYXWVUTSRQPO']) {
      assert.match(passwordProblem(run) ?? '', /run of consecutive characters/, run);
    }
    assert.match(passwordProblem('eleven char') ?? '', /^must be at least 12 characters$/);
    assert.match(passwordProblem('x'.repeat(1025)) ?? '', /^must NOT have more than 1024 characters$/);
  });

  it('accepts passphrases and random passwords', () => {
    for (const ok of [
      PASSWORD,
      'zq8Vn3pLx2Rk',
      'a brand new passphrase',
      'tr0ub4dor&3-x',
      '12345 apples on a tree',
    ]) {
      assert.equal(passwordProblem(ok), undefined, ok);
    }
  });
});

describe('every way a password is set refuses weak ones', () => {
  let t: Awaited<ReturnType<typeof authTestApp>>;
  let admin: { authorization: string };
  before(async () => {
    t = await authTestApp();
    admin = await authHeader(t.deps, { scopes: ['admin'] });
  });
  after(() => t.close());

  it('POST /admin/users answers 400 VALIDATION_FAILED naming the rule, and creates nobody', async () => {
    for (const [i, password] of WEAK.entries()) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/admin/users',
        headers: admin,
        payload: { email: `weak${i}@example.com`, password, role: 'viewer' },
      });
      assert.equal(response.statusCode, 400, password);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      const body = response.json();
      assert.equal(body.code, 'VALIDATION_FAILED');
      assert.match(body.detail, /^The password must NOT /);
      assert.equal(body.errors[0].path, 'body/password');
      assert.equal(await t.deps.store.auth.findUserByEmail(`weak${i}@example.com`, 'default'), undefined);
    }
  });

  it('POST /auth/password answers 400 and keeps the password (and the try is not a failed login)', async () => {
    await createUser(t.deps, { email: 'dee@example.com', password: PASSWORD, role: 'viewer' });
    const { access_token: token } = await loginAs(t.app, 'dee@example.com', PASSWORD);
    for (const newPassword of WEAK) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/auth/password',
        headers: { authorization: `Bearer ${token}` },
        payload: { currentPassword: PASSWORD, newPassword },
      });
      assert.equal(response.statusCode, 400, newPassword);
      assert.equal(response.json().code, 'VALIDATION_FAILED');
      assert.equal(response.json().errors[0].path, 'body/newPassword');
    }
    await loginAs(t.app, 'dee@example.com', PASSWORD);
  });

  it('herald users add refuses them with a usage error', async () => {
    const env = { HERALD_DATA_DIR: tempDir(), LOG_LEVEL: 'silent' };
    const error = console.error;
    for (const password of WEAK) {
      const printed: string[] = [];
      console.error = (...parts: unknown[]) => printed.push(parts.join(' '));
      try {
        const args = [
          'users',
          'add',
          '--email',
          'cli@example.com',
          '--password',
          password,
          '--role',
          'viewer',
        ];
        assert.equal(await main(args, env), 2, password);
      } finally {
        console.error = error;
      }
      assert.match(printed.join('\n'), /the password must NOT /);
    }
  });

  it('HERALD_ADMIN_PASSWORD (the bootstrap admin) refuses them when the admin is to be made', async () => {
    for (const [i, password] of WEAK.entries()) {
      // The configuration itself loads: the variable matters only to a first start.
      loadConfig({ HERALD_ADMIN_EMAIL: `boot${i}@example.com`, HERALD_ADMIN_PASSWORD: password });
      await assert.rejects(
        bootstrapAdmin(t.deps.store.auth, t.deps.clock, `boot${i}@example.com`, password),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.variable === 'HERALD_ADMIN_PASSWORD' &&
          /must NOT /.test(error.message),
      );
      assert.equal(await t.deps.store.auth.findUserByEmail(`boot${i}@example.com`, 'default'), undefined);
    }
    // An admin made before a rule was added keeps starting with its old variables.
    await createUser(t.deps, { email: 'old-admin@example.com', password: PASSWORD, role: 'admin' });
    assert.equal(
      await bootstrapAdmin(t.deps.store.auth, t.deps.clock, 'old-admin@example.com', WEAK[0] as string),
      false,
    );
  });
});
