import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AttemptClaim, DuplicateError, type SigningKeyRecord } from '../../src/store/port/auth.ts';
import type { Store } from '../../src/store/port/index.ts';

const T0 = Date.UTC(2026, 0, 1);

const key = (kid: string, createdAt = T0): SigningKeyRecord => ({
  kid,
  alg: 'ES256',
  publicJwk: `{"kid":"${kid}"}`,
  privateJwk: `{"kid":"${kid}","d":"x"}`,
  createdAt,
  retiredAt: null,
  publishUntil: null,
});

/** Behaviour of `store.auth` that every adapter must show. */
export function authStoreSuite(name: string, open: () => Promise<Store>): void {
  describe(`${name}: auth store`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());

    it('keeps one active signing key: a second first key loses quietly', async () => {
      assert.equal(await store.auth.insertFirstSigningKey(key('k1')), true);
      assert.equal(await store.auth.insertFirstSigningKey(key('k2')), false);
      const keys = await store.auth.listSigningKeys();
      assert.deepEqual(
        keys.map((k) => k.kid),
        ['k1'],
      );
      assert.equal(keys[0]?.privateJwk, '{"kid":"k1","d":"x"}');
    });

    it('rotates atomically and deletes retired keys once their publication ended', async () => {
      await store.auth.rotateSigningKey(key('k3', T0 + 1), T0 + 1, T0 + 1000);
      const keys = await store.auth.listSigningKeys();
      const old = keys.find((k) => k.kid === 'k1');
      assert.equal(old?.retiredAt, T0 + 1);
      assert.equal(old?.publishUntil, T0 + 1000);
      assert.equal(keys.find((k) => k.kid === 'k3')?.retiredAt, null);
      assert.deepEqual(await store.auth.deleteExpiredSigningKeys(T0 + 1000), []);
      assert.deepEqual(await store.auth.deleteExpiredSigningKeys(T0 + 1001), ['k1']);
      assert.equal(await store.auth.deleteSigningKey('k3'), true);
      assert.equal(await store.auth.deleteSigningKey('k3'), false);
      assert.equal(await store.auth.insertFirstSigningKey(key('k4')), true);
    });

    it('creates users once per tenant and email and finds, lists and disables them', async () => {
      await store.auth.ensureTenant('acme', T0);
      await store.auth.ensureTenant('acme', T0);
      await store.auth.ensureTenant('default', T0);
      const user = {
        passwordHash: '$argon2id$x',
        role: 'sender',
        disabled: false,
        createdAt: T0,
        sessionsValidAfter: null,
      };
      assert.equal(await store.auth.hasUsers(), false);
      await store.auth.createUser({ ...user, id: 'u1', email: 'a@x.test', tenant: 'acme' });
      assert.equal(await store.auth.hasUsers(), true);
      await store.auth.createUser({
        ...user,
        id: 'u2',
        email: 'b@x.test',
        tenant: 'default',
        createdAt: T0 + 1,
      });
      await assert.rejects(
        store.auth.createUser({ ...user, id: 'u3', email: 'a@x.test', tenant: 'acme' }),
        DuplicateError,
      );
      assert.equal((await store.auth.findUserByEmail('a@x.test', 'acme'))?.id, 'u1');
      assert.equal(await store.auth.findUserByEmail('a@x.test', 'default'), undefined);
      assert.equal(await store.auth.findUserByEmail('nobody@x.test', 'acme'), undefined);
      assert.deepEqual(await store.auth.findUsersByEmail('nobody@x.test', 4), []);
      assert.equal((await store.auth.findUserById('u2'))?.email, 'b@x.test');
      assert.deepEqual(
        (await store.auth.listUsers('acme')).map((u) => u.id),
        ['u1'],
      );
      assert.deepEqual(
        (await store.auth.listUsers()).map((u) => u.id),
        ['u1', 'u2'],
      );
      assert.equal(await store.auth.setUserDisabled('u1', true), true);
      assert.equal((await store.auth.findUserById('u1'))?.disabled, true);
      assert.equal(await store.auth.setUserDisabled('nope', true), false);
      assert.equal((await store.auth.findUserById('u2'))?.sessionsValidAfter, null);
      assert.equal(await store.auth.revokeSessions('u2', T0 + 50), true);
      assert.equal((await store.auth.findUserById('u2'))?.sessionsValidAfter, T0 + 50);
      assert.equal(await store.auth.revokeSessions('nope', T0 + 50), false);
      await store.auth.setUserPassword('u2', '$argon2id$y', T0 + 60);
      const changed = await store.auth.findUserById('u2');
      assert.deepEqual([changed?.passwordHash, changed?.sessionsValidAfter], ['$argon2id$y', T0 + 60]);
    });

    it('keeps the same email as a user of several tenants, each its own', async () => {
      await store.auth.ensureTenant('t1', T0);
      await store.auth.ensureTenant('t2', T0);
      await store.auth.ensureTenant('t3', T0);
      const user = { role: 'viewer', disabled: false, sessionsValidAfter: null, email: 'same@x.test' };
      await store.auth.createUser({ ...user, id: 's2', passwordHash: 'h2', tenant: 't2', createdAt: T0 + 2 });
      await store.auth.createUser({ ...user, id: 's1', passwordHash: 'h1', tenant: 't1', createdAt: T0 + 1 });
      await store.auth.createUser({ ...user, id: 's3', passwordHash: 'h3', tenant: 't3', createdAt: T0 + 3 });
      await assert.rejects(
        store.auth.createUser({ ...user, id: 's4', passwordHash: 'h4', tenant: 't2', createdAt: T0 + 4 }),
        DuplicateError,
      );
      assert.equal((await store.auth.findUserByEmail('same@x.test', 't2'))?.passwordHash, 'h2');
      assert.equal((await store.auth.findUserByEmail('same@x.test', 't3'))?.passwordHash, 'h3');
      // Oldest first, at most the limit.
      assert.deepEqual(
        (await store.auth.findUsersByEmail('same@x.test', 10)).map((u) => [u.id, u.tenant]),
        [
          ['s1', 't1'],
          ['s2', 't2'],
          ['s3', 't3'],
        ],
      );
      assert.deepEqual(
        (await store.auth.findUsersByEmail('same@x.test', 2)).map((u) => u.id),
        ['s1', 's2'],
      );
    });

    it('links, finds and unlinks external identities', async () => {
      await store.auth.ensureTenant('idp', T0);
      const base = {
        role: 'viewer',
        disabled: false,
        sessionsValidAfter: null,
        tenant: 'idp',
        createdAt: T0,
      };
      await store.auth.createUser({ ...base, id: 'i1', email: 'one@x.test', passwordHash: 'h' });
      await store.auth.createUser({ ...base, id: 'i2', email: 'two@x.test', passwordHash: 'h' });
      assert.equal(await store.auth.linkIdentity('https://idp', 'sub-1', 'i1', T0), true);
      assert.equal(await store.auth.linkIdentity('https://idp', 'sub-1', 'i2', T0), false);
      assert.equal((await store.auth.findUserByIdentity('https://idp', 'sub-1'))?.id, 'i1');
      await store.auth.unlinkIdentity('https://idp', 'sub-1');
      await store.auth.unlinkIdentity('https://idp', 'sub-never');
      assert.equal(await store.auth.findUserByIdentity('https://idp', 'sub-1'), undefined);
      assert.equal(await store.auth.linkIdentity('https://idp', 'sub-1', 'i2', T0), true);
      assert.equal((await store.auth.findUserByIdentity('https://idp', 'sub-1'))?.id, 'i2');
    });

    it('stores clients with their scopes', async () => {
      await store.auth.createClient({
        id: 'c1',
        name: 'billing',
        secretHash: '$argon2id$y',
        scopes: ['notifications:send', 'admin'],
        tenant: 'acme',
        disabled: false,
        createdAt: T0,
      });
      const client = await store.auth.findClient('c1');
      assert.deepEqual(client?.scopes, ['notifications:send', 'admin']);
      assert.equal(client?.tenant, 'acme');
      assert.equal(await store.auth.findClient('c2'), undefined);
      assert.deepEqual(
        (await store.auth.listClients('acme')).map((c) => c.id),
        ['c1'],
      );
      assert.deepEqual(await store.auth.listClients('default'), []);
    });

    it('counts attempts up to the limits of the subject and the address, and says which must leave first', async () => {
      const claim = (subject: string, at: number, over: Partial<AttemptClaim> = {}) =>
        store.auth.claimAttempt({
          scope: 'login',
          subject,
          address: '10.0.0.1',
          now: at,
          since: T0 - 1,
          limits: { subject: 3, address: 4 },
          ...over,
        });
      const ids: number[] = [];
      for (const at of [T0, T0 + 10, T0 + 20]) {
        const counted = await claim('a@x.test', at);
        assert.ok('id' in counted);
        ids.push(counted.id);
      }
      // The subject is full: the oldest of its three newest must leave the window first.
      assert.deepEqual(await claim('a@x.test', T0 + 30), { blockedBy: T0 });
      // Another scope counts apart.
      assert.ok('id' in (await claim('a@x.test', T0 + 30, { scope: 'token' })));
      // Another subject from the same address: the address has one place left.
      assert.ok('id' in (await claim('b@x.test', T0 + 40)));
      assert.deepEqual(await claim('c@x.test', T0 + 50), { blockedBy: T0 });
      // A success is uncounted; a window that has moved on forgets.
      await store.auth.dropAttempt(ids[0] as number);
      assert.ok('id' in (await claim('a@x.test', T0 + 60)));
      assert.ok('id' in (await claim('d@x.test', T0 + 70, { since: T0 + 25 })));
      await store.auth.pruneAttempts(T0 + 45);
      assert.ok('id' in (await claim('a@x.test', T0 + 80)));
    });
  });
}
