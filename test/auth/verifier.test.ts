import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import type { HeraldDeps } from '../../src/main.ts';
import { createDeps } from '../../src/main.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';

describe('access token verifier', () => {
  let deps: HeraldDeps;
  const clock = manualClock(Date.UTC(2026, 0, 1));
  before(async () => {
    deps = await createDeps(testConfig(), clock);
  });
  after(() => deps.store.close());

  it('accepts a token minted with the store keys and reads its principal', async () => {
    const token = await tokenFor(deps, { tenant: 'acme', scopes: ['notifications:send'] });
    const principal = await deps.verifier.verify(token);
    assert.equal(principal.tenant, 'acme');
    assert.deepEqual([...principal.scopes], ['notifications:send']);
  });

  it('accepts a token until 30 s after exp and refuses it after that', async () => {
    const token = await tokenFor(deps, { ttl: 60 });
    clock.advance(89_000);
    assert.ok(await deps.verifier.verify(token));
    clock.advance(2_000);
    await assert.rejects(deps.verifier.verify(token), { code: 'AUTH_INVALID_TOKEN' });
  });
});
