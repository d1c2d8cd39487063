// argon2 behind a concurrency limit (README, "Authentication"): a flood of logins gets 503 with
// Retry-After once 4 hashes run and 64 wait, instead of an unbounded queue on the thread pool;
// a try answered 503 was never checked, so it does not count towards the login throttle.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { authTestApp, createUser } from '../helpers/auth.ts';

const PASSWORD = 'correct horse battery staple';

describe('argon2 concurrency limit', () => {
  let t: Awaited<ReturnType<typeof authTestApp>>;
  before(async () => {
    t = await authTestApp({ HERALD_LOGIN_MAX_FAILURES: '1' });
    await createUser(t.deps, { email: 'ada@example.com', password: PASSWORD });
  });
  after(() => t.close());

  const login = (email: string, password: string, from: string) =>
    t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email, password },
      headers: { 'x-forwarded-for': from },
    });

  it('answers 503 with Retry-After past 4 running and 64 waiting, and does not count those tries', async () => {
    const flood = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        login(`nobody${i}@example.com`, 'wrong password', `10.7.${i >> 8}.${i & 255}`),
      ),
    );
    const refused = flood.filter((r) => r.statusCode === 503);
    assert.ok(refused.length > 0, 'some tries found the queue full');
    assert.equal(refused.length + flood.filter((r) => r.statusCode === 401).length, 200);
    for (const r of refused) {
      assert.equal(r.headers['retry-after'], '1');
      assert.equal(r.json().code, 'UNAVAILABLE');
    }
    // The limit is one failure per email: an email refused with 503 still has its one try.
    const index = flood.findIndex((r) => r.statusCode === 503);
    const again = await login(`nobody${index}@example.com`, 'wrong password', '10.7.9.9');
    assert.equal(again.statusCode, 401);
    assert.equal((await login('ada@example.com', PASSWORD, '10.7.9.10')).statusCode, 200);
  });
});
