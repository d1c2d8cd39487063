import assert from 'node:assert/strict';
import { chmodSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { KeyDecryptionError, openPrivateKey, sealPrivateKey } from '../../src/auth/key-crypto.ts';
import { manualClock } from '../../src/clock.ts';
import { buildApi, createDeps } from '../../src/main.ts';
import { authTestApp, tokenFor } from '../helpers/auth.ts';
import { tempDir, testConfig } from '../helpers/config.ts';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

describe('signing keys', () => {
  it('makes an ES256 key with a kid on first start and publishes only its public part', async () => {
    const t = await authTestApp();
    try {
      const response = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
      assert.equal(response.statusCode, 200);
      assert.match(String(response.headers['cache-control']), /public, max-age=\d+/);
      const { keys } = response.json();
      assert.equal(keys.length, 1);
      assert.equal(keys[0].alg, 'ES256');
      assert.equal(keys[0].kty, 'EC');
      assert.ok(keys[0].kid);
      for (const member of PRIVATE_MEMBERS) assert.equal(member in keys[0], false, member);
      const token = await tokenFor(t.deps);
      assert.equal(decodeProtectedHeader(token).kid, keys[0].kid);
    } finally {
      await t.close();
    }
  });

  for (const [alg, kty] of [
    ['EdDSA', 'OKP'],
    ['RS256', 'RSA'],
  ] as const) {
    it(`signs and verifies with ${alg} when configured`, async () => {
      const t = await authTestApp({ HERALD_JWT_ALG: alg });
      try {
        const { keys } = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
        assert.equal(keys[0].alg, alg);
        assert.equal(keys[0].kty, kty);
        for (const member of PRIVATE_MEMBERS) assert.equal(member in keys[0], false, member);
        const token = await tokenFor(t.deps);
        assert.equal(decodeProtectedHeader(token).alg, alg);
        const me = await t.app.inject({
          method: 'GET',
          url: '/auth/me',
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(me.statusCode, 200);
      } finally {
        await t.close();
      }
    });
  }

  it('keeps the keys in the store, so a restarted or second instance signs with the same key', async () => {
    const dataDir = tempDir();
    const first = await createDeps(testConfig({ HERALD_DATA_DIR: dataDir }));
    const token = await tokenFor(first);
    const kid = decodeProtectedHeader(token).kid;
    await first.store.close();
    const second = await createDeps(testConfig({ HERALD_DATA_DIR: dataDir }));
    try {
      assert.equal(decodeProtectedHeader(await tokenFor(second)).kid, kid);
      assert.ok(await second.verifier.verify(token));
    } finally {
      await second.store.close();
    }
  });

  it('encrypts private keys at rest with HERALD_KEY_ENCRYPTION_SECRET and refuses a wrong secret', async () => {
    const dataDir = tempDir();
    const env = { HERALD_DATA_DIR: dataDir, HERALD_KEY_ENCRYPTION_SECRET: 'correct secret' };
    const deps = await createDeps(testConfig(env));
    const token = await tokenFor(deps);
    const [record] = await deps.store.auth.listSigningKeys();
    assert.ok(record);
    assert.ok(record.privateJwk.startsWith('enc:v1:'));
    assert.doesNotMatch(record.privateJwk, /"d"/);
    await deps.store.close();

    const again = await createDeps(testConfig(env));
    assert.ok(await again.verifier.verify(token));
    assert.ok(await tokenFor(again));
    await again.store.close();

    // Start-up of an auth process fails, naming the variable.
    for (const secret of ['wrong secret', '']) {
      await assert.rejects(
        createDeps(testConfig({ ...env, HERALD_KEY_ENCRYPTION_SECRET: secret })),
        (error) => {
          assert.ok(error instanceof KeyDecryptionError);
          assert.match(error.message, /HERALD_KEY_ENCRYPTION_SECRET/);
          return true;
        },
      );
    }
    // An api-only process needs no private signing key, but opens the recipient digests' key
    // (#49.14), sealed too: without the secret it fails at start, naming it, not at the first
    // notification; with it, it starts and verifies.
    const apiEnv = { HERALD_DATA_DIR: dataDir, HERALD_ROLES: 'api' };
    await assert.rejects(createDeps(testConfig(apiEnv)), /HERALD_KEY_ENCRYPTION_SECRET is not set/);
    const apiOnly = await createDeps(
      testConfig({ ...apiEnv, HERALD_KEY_ENCRYPTION_SECRET: env.HERALD_KEY_ENCRYPTION_SECRET }),
    );
    assert.ok(await apiOnly.verifier.verify(token));
    await apiOnly.store.close();
  });

  it('stores private keys in clear without a secret, and seals them at the first start with one', async () => {
    const dataDir = tempDir();
    const plain = await createDeps(testConfig({ HERALD_DATA_DIR: dataDir }));
    const token = await tokenFor(plain);
    const [record] = await plain.store.auth.listSigningKeys();
    assert.match(record?.privateJwk ?? '', /"d"/);
    // The client-secret digest key, stored in plaintext like the signing key.
    await plain.store.auth.serverSecret('client-secret-mac', 'a-plaintext-key', 0);
    await plain.store.close();

    const env = { HERALD_DATA_DIR: dataDir, HERALD_KEY_ENCRYPTION_SECRET: 'a secret set later' };
    const sealed = await createDeps(testConfig(env));
    const [after] = await sealed.store.auth.listSigningKeys();
    assert.equal(after?.kid, record?.kid);
    assert.match(after?.privateJwk ?? '', /^enc:v1:/);
    assert.match(await sealed.store.auth.serverSecret('client-secret-mac', 'unused', 0), /^enc:v1:/);
    // The recipient digests' key, made in plaintext by the first start (#49.14), sealed too.
    assert.match(await sealed.store.auth.serverSecret('recipient-digest', 'unused', 0), /^enc:v1:/);
    // Same key, still usable: old tokens verify, new ones are signed with it.
    assert.ok(await sealed.verifier.verify(token));
    assert.equal(decodeProtectedHeader(await tokenFor(sealed)).kid, record?.kid);
    await sealed.store.close();
    // Sealed for good: without the secret an auth process no longer starts.
    await assert.rejects(createDeps(testConfig({ HERALD_DATA_DIR: dataDir })), KeyDecryptionError);
  });

  it('keeps the data directory 0700 and the database files 0600', async () => {
    const dataDir = join(tempDir(), 'data');
    const deps = await createDeps(testConfig({ HERALD_DATA_DIR: dataDir }));
    await tokenFor(deps);
    try {
      assert.equal(statSync(dataDir).mode & 0o777, 0o700);
      for (const file of readdirSync(dataDir).filter((name) => name.startsWith('herald.db'))) {
        assert.equal(statSync(join(dataDir, file)).mode & 0o777, 0o600, file);
      }
      assert.ok(readdirSync(dataDir).includes('herald.db-wal'));
    } finally {
      await deps.store.close();
    }
    // A directory and database made by an earlier version (0755, 0644) are tightened.
    chmodSync(dataDir, 0o755);
    chmodSync(join(dataDir, 'herald.db'), 0o644);
    const again = await createDeps(testConfig({ HERALD_DATA_DIR: dataDir }));
    await again.store.close();
    assert.equal(statSync(dataDir).mode & 0o777, 0o700);
    assert.equal(statSync(join(dataDir, 'herald.db')).mode & 0o777, 0o600);
  });
});

describe('sealed keys', () => {
  it('refuses a sealed value whose GCM tag was cut short, or changed', () => {
    const sealed = sealPrivateKey('{"d":"secret"}', 'kid-1', 'the secret');
    assert.equal(openPrivateKey(sealed, 'kid-1', 'the secret'), '{"d":"secret"}');
    const [salt, iv, tag, body] = sealed.slice('enc:v1:'.length).split(':') as [
      string,
      string,
      string,
      string,
    ];
    const tagBytes = Buffer.from(tag, 'base64url');
    const short = `enc:v1:${[salt, iv, tagBytes.subarray(0, 4).toString('base64url'), body].join(':')}`;
    assert.throws(() => openPrivateKey(short, 'kid-1', 'the secret'), KeyDecryptionError);
    tagBytes[0] = (tagBytes[0] as number) ^ 1;
    const changed = `enc:v1:${[salt, iv, tagBytes.toString('base64url'), body].join(':')}`;
    assert.throws(() => openPrivateKey(changed, 'kid-1', 'the secret'), KeyDecryptionError);
    // Bound to its kid: moved onto another key's row, it does not open.
    assert.throws(() => openPrivateKey(sealed, 'kid-2', 'the secret'), KeyDecryptionError);
  });
});

describe('key rotation', () => {
  it('keeps retired keys published until their last token expired, then drops them', async () => {
    const clock = manualClock(Date.UTC(2026, 0, 1));
    const config = testConfig({ HERALD_ACCESS_TTL: '600', HERALD_REFRESH_TTL: '3600' });
    const deps = await createDeps(config, clock);
    const app = await buildApi(deps);
    try {
      const old = await tokenFor(deps);
      const oldKid = decodeProtectedHeader(old).kid;
      const { kid: newKid, retired } = await deps.auth.keyring.rotate();
      assert.equal(retired, oldKid);
      assert.notEqual(newKid, oldKid);

      const fresh = await tokenFor(deps);
      assert.equal(decodeProtectedHeader(fresh).kid, newKid);
      const jwks = async () =>
        (
          (await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys as Array<{
            kid: string;
          }>
        ).map((key) => key.kid);
      assert.deepEqual((await jwks()).sort(), [oldKid, newKid].sort());

      const me = (token: string) =>
        app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${token}` } });
      assert.equal((await me(old)).statusCode, 200);
      // A refresh token signed just before rotation lives an hour: the old key stays published that long.
      clock.advance(3600_000);
      assert.ok((await jwks()).includes(oldKid as string));
      // New tokens (of the new key, with the configured lifetime) verify all along.
      assert.equal((await me(await tokenFor(deps))).statusCode, 200);
      clock.advance(31_000 + 60_000);
      assert.deepEqual(await jwks(), [newKid]);
      await deps.auth.keyring.rotate();
      const kids = (await deps.store.auth.listSigningKeys()).map((key) => key.kid);
      assert.equal(kids.includes(oldKid as string), false, 'expired key deleted from the store');
    } finally {
      await app.close();
      await deps.store.close();
    }
  });

  it('lets a second instance on the same database verify new-key tokens at once and sign with the new key within 10 s', async () => {
    const clock = manualClock(Date.UTC(2026, 0, 1));
    const config = testConfig();
    const a = await createDeps(config, clock);
    const b = await createDeps(config, clock);
    try {
      await tokenFor(b);
      const { kid } = await a.auth.keyring.rotate();
      // An unknown kid makes b re-read the key table (at most every 5 s), which also moves its signing.
      clock.advance(5_001);
      assert.ok(await b.verifier.verify(await tokenFor(a)));
      assert.equal(decodeProtectedHeader(await tokenFor(b)).kid, kid);
      // Without such a hint, b re-reads the table within HERALD_KEY_RELOAD_MS (5 s).
      const { kid: next } = await a.auth.keyring.rotate();
      clock.advance(5_001);
      assert.equal(decodeProtectedHeader(await tokenFor(b)).kid, next);
    } finally {
      await a.store.close();
      await b.store.close();
    }
  });

  it('refuses tokens of a removed key on another instance within 10 s, even ones still in the verify cache', async () => {
    const clock = manualClock(Date.UTC(2026, 0, 1));
    const config = testConfig();
    const deps = await createDeps(config, clock);
    const other = await createDeps(config, clock);
    try {
      const token = await tokenFor(deps);
      assert.ok(await other.verifier.verify(token));
      const kid = decodeProtectedHeader(token).kid as string;
      await deps.auth.keyring.rotate();
      assert.ok(await deps.store.auth.deleteSigningKey(kid));
      clock.advance(5_001);
      await assert.rejects(other.verifier.verify(token), { code: 'AUTH_INVALID_TOKEN' });
    } finally {
      await deps.store.close();
      await other.store.close();
    }
  });
});
