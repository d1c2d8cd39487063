import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalVerifier } from '../../src/auth/verifier.ts';
import { VerifyCache } from '../../src/auth/verify-cache.ts';
import { manualClock } from '../../src/clock.ts';
import type { HeraldDeps } from '../../src/main.ts';
import { createDeps } from '../../src/main.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';

describe('verified-token cache', () => {
  let deps: HeraldDeps;
  const clock = manualClock(Date.UTC(2026, 0, 1));
  before(async () => {
    deps = await createDeps(testConfig({ HERALD_VERIFY_CACHE_SIZE: '2' }), clock);
  });
  after(() => deps.store.close());

  const verifierWith = (cacheSize: number) => {
    const { keyring } = deps.auth;
    const { issuer, audience } = deps.config.auth;
    return createLocalVerifier({ keyring, issuer, audience, clock, cacheSize, maxLifetimeS: 600 });
  };

  it('stays within its bound, evicting the oldest entry', async () => {
    const verifier = verifierWith(2);
    const tokens = await Promise.all([1, 2, 3].map((i) => tokenFor(deps, { sub: `usr_${i}` })));
    for (const token of tokens) await verifier.verify(token);
    assert.equal(verifier.cache.size, 2);
    assert.equal(verifier.cache.get(tokens[0] as string, clock.now()), undefined);
    assert.ok(verifier.cache.get(tokens[2] as string, clock.now()));
  });

  it('is keyed by the whole token: a changed signature is verified, not served from the cache', async () => {
    const verifier = verifierWith(10);
    const token = await tokenFor(deps);
    await verifier.verify(token);
    const tampered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    await assert.rejects(verifier.verify(tampered), { code: 'AUTH_INVALID_TOKEN' });
  });

  it('honours exp for cached tokens', async () => {
    const verifier = verifierWith(10);
    const token = await tokenFor(deps, { ttl: 5 });
    await verifier.verify(token);
    assert.equal(verifier.cache.size, 1);
    clock.advance(5_000 + 30_000 - 1);
    assert.ok(await verifier.verify(token));
    clock.advance(1);
    await assert.rejects(verifier.verify(token), { code: 'AUTH_INVALID_TOKEN' });
  });

  it('caches nothing with size 0 and still verifies', async () => {
    const verifier = verifierWith(0);
    const token = await tokenFor(deps);
    assert.ok(await verifier.verify(token));
    assert.ok(await verifier.verify(token));
    assert.equal(verifier.cache.size, 0);
  });

  it('takes its size from HERALD_VERIFY_CACHE_SIZE', () => {
    assert.equal(deps.auth.verifier.cache.maxSize, 2);
    assert.equal(new VerifyCache(0).maxSize, 0);
  });
});
