import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { buildApi, createDeps } from '../../src/main.ts';
import { herald } from '../helpers/cli.ts';
import { tempDir, testConfig } from '../helpers/config.ts';

describe('herald users, clients and keys', () => {
  it('adds, lists and disables users; the app sees them', async () => {
    const env = { HERALD_DATA_DIR: tempDir() };
    const add = await herald(
      [
        'users',
        'add',
        '--email',
        'Cli@Example.com',
        '--password',
        'cli-password',
        '--role',
        'sender',
        '--tenant',
        'acme',
      ],
      env,
    );
    assert.equal(add.code, 0, add.err);
    assert.match(add.out, /created user usr_\S+ cli@example.com role=sender tenant=acme/);
    const dup = await herald(
      [
        'users',
        'add',
        '--email',
        'cli@example.com',
        '--password',
        'cli-password',
        '--role',
        'sender',
        '--tenant',
        'acme',
      ],
      env,
    );
    assert.equal(dup.code, 1);
    assert.match(dup.err, /tenant acme has a user with email cli@example\.com/);
    // The same email in another tenant (default, without --tenant) is another user (#46).
    const other = await herald(
      ['users', 'add', '--email', 'cli@example.com', '--password', 'another-password', '--role', 'viewer'],
      env,
    );
    assert.equal(other.code, 0, other.err);
    assert.match(other.out, /tenant=default/);
    const list = await herald(['users', 'list', '--tenant', 'acme'], env);
    assert.match(list.out, /cli@example\.com\s+sender\s+acme\s+false/);

    const deps = await createDeps(testConfig(env));
    const app = await buildApi(deps);
    const login = () =>
      app.inject({
        method: 'POST',
        url: '/auth/login',
        payload: { email: 'cli@example.com', password: 'cli-password' },
      });
    try {
      assert.equal((await login()).statusCode, 200);
      const ambiguous = await herald(['users', 'disable', '--email', 'cli@example.com'], env);
      assert.equal(ambiguous.code, 2);
      assert.match(
        ambiguous.err,
        /several tenants have a user with email cli@example\.com: give --tenant or --id/,
      );
      const disable = await herald(
        ['users', 'disable', '--email', 'cli@example.com', '--tenant', 'acme'],
        env,
      );
      assert.equal(disable.code, 0, disable.err);
      assert.equal((await login()).statusCode, 401);
    } finally {
      await app.close();
      await deps.store.close();
    }
  });

  it('refuses bad input with the usage text and exit code 2', async () => {
    const env = { HERALD_DATA_DIR: tempDir() };
    const badRole = await herald(
      ['users', 'add', '--email', 'a@b.c', '--password', 'long-enough', '--role', 'root'],
      env,
    );
    assert.equal(badRole.code, 2);
    assert.match(badRole.err, /Usage/);
    const short = await herald(
      ['users', 'add', '--email', 'a@b.c', '--password', 'short', '--role', 'admin'],
      env,
    );
    assert.equal(short.code, 2);
    const email = await herald(
      ['users', 'add', '--email', 'ada at example', '--password', 'long-enough-1', '--role', 'admin'],
      env,
    );
    assert.equal(email.code, 2);
    assert.match(email.err, /--email must be an email address/);
    // An option an action does not take is refused before the action runs.
    const option = await herald(['keys', 'rotate', '--alg', 'HS256'], env);
    assert.equal(option.code, 2);
    assert.match(option.err, /Unknown option '--alg'/);
    const scope = await herald(['clients', 'add', '--name', 'x', '--scopes', 'everything'], env);
    assert.equal(scope.code, 2);
    assert.match(scope.err, /unknown scope everything/);
    const config = await herald(['users', 'list'], { HERALD_DATA_DIR: tempDir(), HERALD_JWT_ALG: 'HS256' });
    assert.equal(config.code, 2);
    assert.match(config.err, /HERALD_JWT_ALG/);
  });

  it('adds a client whose printed secret works at /auth/token, lists it without the secret, rotates and disables it', async () => {
    const env = { HERALD_DATA_DIR: tempDir() };
    const add = await herald(
      ['clients', 'add', '--name', 'prometheus', '--scopes', 'admin notifications:read'],
      env,
    );
    assert.equal(add.code, 0, add.err);
    const id = /client_id: (\S+)/.exec(add.out)?.[1] as string;
    const secret = /client_secret: (\S+)/.exec(add.out)?.[1] as string;
    const list = await herald(['clients', 'list'], env);
    assert.match(list.out, new RegExp(`${id}\\s+prometheus\\s+default\\s+admin notifications:read`));
    assert.equal(list.out.includes(secret), false);
    const token = async (clientSecret: string) => {
      const deps = await createDeps(testConfig(env));
      const app = await buildApi(deps);
      try {
        const response = await app.inject({
          method: 'POST',
          url: '/auth/token',
          payload: { grant_type: 'client_credentials', client_id: id, client_secret: clientSecret },
        });
        return response.statusCode;
      } finally {
        await app.close();
        await deps.store.close();
      }
    };
    assert.equal(await token(secret), 200);
    // Rotate: a new secret is printed, and the old one is refused from then on.
    const rotated = await herald(['clients', 'rotate', '--id', id], env);
    assert.equal(rotated.code, 0, rotated.err);
    const fresh = /client_secret: (\S+)/.exec(rotated.out)?.[1] as string;
    assert.notEqual(fresh, secret);
    assert.equal(await token(secret), 401);
    assert.equal(await token(fresh), 200);
    // Disable: no more tokens, whatever the secret.
    assert.equal((await herald(['clients', 'disable', '--id', id], env)).code, 0);
    assert.equal(await token(fresh), 401);
    assert.equal((await herald(['clients', 'rotate', '--id', 'cli_nobody'], env)).code, 1);
    assert.equal((await herald(['clients', 'disable'], env)).code, 2);
  });

  it('rotates keys, keeping the retired key published, and removes a retired key', async () => {
    const env = { HERALD_DATA_DIR: tempDir() };
    const deps = await createDeps(testConfig(env));
    const [first] = await deps.store.auth.listSigningKeys();
    await deps.store.close();
    const rotate = await herald(['keys', 'rotate'], env);
    assert.equal(rotate.code, 0, rotate.err);
    assert.match(rotate.out, new RegExp(`retired key ${first?.kid}`));
    const list = await herald(['keys', 'list'], env);
    assert.match(list.out, /active/);
    assert.match(list.out, new RegExp(`${first?.kid}\\s+ES256\\s+retired\\s+\\d{4}-`));
    const activeKid = /new signing key (\S+)/.exec(rotate.out)?.[1] as string;
    // `--kid=`: a key id may begin with '-' (base64url), which parseArgs would read as an option.
    const refuse = await herald(['keys', 'remove', `--kid=${activeKid}`], env);
    assert.equal(refuse.code, 1);
    const remove = await herald(['keys', 'remove', `--kid=${first?.kid}`], env);
    assert.equal(remove.code, 0, remove.err);
    assert.doesNotMatch((await herald(['keys', 'list'], env)).out, new RegExp(first?.kid as string));
  });

  it('rotates the unsubscribe key: links made before still open, new ones use the new key', async () => {
    const env = { HERALD_DATA_DIR: tempDir(), HERALD_KEY_ENCRYPTION_SECRET: 'a secret of sixteen or more' };
    const deps = await createDeps(testConfig(env));
    const target = { tenant: 'default', channel: 'email' as const, recipient: 'ada@example.com' };
    const before = await deps.unsubscribe.make(target);
    await deps.store.close();
    const rotate = await herald(['keys', 'rotate-unsubscribe'], env);
    assert.equal(rotate.code, 0, rotate.err);
    assert.match(rotate.out, /new unsubscribe key 2; 2 kept/);
    const again = await createDeps(testConfig(env));
    try {
      assert.deepEqual(await again.unsubscribe.open(before), target);
      const after = await again.unsubscribe.make(target);
      assert.equal(Buffer.from(after, 'base64url').readUInt16BE(0), 2);
      assert.deepEqual(await again.unsubscribe.open(after), target);
    } finally {
      await again.store.close();
    }
  });

  it('works through the herald binary, reading the password from stdin', () => {
    const env = { ...process.env, HERALD_DATA_DIR: tempDir(), LOG_LEVEL: 'silent' };
    const add = spawnSync(
      process.execPath,
      ['bin/herald.js', 'users', 'add', '--email', 'bin@example.com', '--password-stdin', '--role', 'viewer'],
      { env, input: 'stdin-password\n', encoding: 'utf8' },
    );
    assert.equal(add.status, 0, add.stderr);
    const list = spawnSync(process.execPath, ['bin/herald.js', 'users', 'list'], { env, encoding: 'utf8' });
    assert.match(list.stdout, /bin@example\.com\s+viewer\s+default/);
    assert.equal(list.stdout.includes('stdin-password'), false);
  });
});
