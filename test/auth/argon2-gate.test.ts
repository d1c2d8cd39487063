// argon2 behind a fair concurrency limit (README, "Authentication"): 4 run at once, the rest wait
// in turns by tenant and by caller within it (64 of one tenant, 16 of one caller); past that a
// try gets 503 with Retry-After at once, and a try answered 503 was never checked, so it does not
// count towards the login throttle. One tenant's flood is refused to that tenant alone.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FairGate, type GateTurn, loginTurn } from '../../src/auth/argon2-gate.ts';
import { argon2Stats, verifySecret } from '../../src/auth/passwords.ts';
import { HeraldError } from '../../src/errors.ts';
import { authHeader, authTestApp, createUser } from '../helpers/auth.ts';

const PASSWORD = 'correct horse battery staple';

describe('argon2 concurrency limit', () => {
  let t: Awaited<ReturnType<typeof authTestApp>>;
  before(async () => {
    t = await authTestApp({ HERALD_LOGIN_MAX_FAILURES: '1' });
    await createUser(t.deps, { email: 'ada@example.com', password: PASSWORD });
    await createUser(t.deps, { email: 'bea@globex.test', password: PASSWORD, tenant: 'globex' });
  });
  after(() => t.close());

  const login = (email: string, password: string, from: string) =>
    t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email, password },
      headers: { 'x-forwarded-for': from },
    });

  it('answers 503 with Retry-After past 4 running and 64 waiting logins, and does not count those tries', async () => {
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

  it("lets another tenant's user log in while one tenant's admins flood it with 150 users at once", async () => {
    const admins = await Promise.all(
      [1, 2, 3, 4, 5].map((i) =>
        authHeader(t.deps, { tenant: 'acme', scopes: ['admin'], sub: `usr_boss${i}` }),
      ),
    );
    let refusedOnce: () => void = () => undefined;
    const firstRefusal = new Promise<void>((resolve) => {
      refusedOnce = resolve;
    });
    const flood = Array.from({ length: 150 }, (_, i) =>
      t.app
        .inject({
          method: 'POST',
          url: '/admin/users',
          headers: admins[i % 5],
          payload: { email: `user${i}@acme.test`, password: PASSWORD, role: 'viewer' },
        })
        .then((response) => {
          if (response.statusCode === 503) refusedOnce();
          return response;
        }),
    );
    // Once a flood request is refused, acme's share is full (as the old single queue was).
    await firstRefusal;

    // A login's check joins the queue at once (nothing to await before the gate), so the argon2
    // jobs started until it leaves the queue are the turns it waited.
    const logins = loginTurn('10.8.0.1').tenant;
    const stored = (await t.deps.store.auth.findUserByEmail('bea@globex.test', 'globex'))?.passwordHash;
    const atQueue = argon2Stats().started;
    const acmeWaiting = argon2Stats('acme').waiting;
    const check = verifySecret(stored, PASSWORD, loginTurn('10.8.0.1'));
    assert.equal(argon2Stats(logins).waiting, 1, 'the check waits for a slot');
    assert.ok(acmeWaiting > 10, `acme had ${acmeWaiting} hashes waiting`);
    while (argon2Stats(logins).waiting > 0) await new Promise((resolve) => setImmediate(resolve));
    const startedMeanwhile = argon2Stats().started - atQueue;
    assert.equal(await check, true);
    // Its turn came after at most one of acme's hashes (itself the second start); the other three
    // slots, freed in the same moment of the event loop, may start three more before this looks.
    // In one queue it would have waited for all of acme's 64.
    assert.ok(startedMeanwhile <= 5, `${startedMeanwhile} hashes started while the check waited`);

    // And the login itself is admitted, not refused with the flood.
    const response = await login('bea@globex.test', PASSWORD, '10.8.0.1');
    assert.equal(response.statusCode, 200, response.body);
    const answers = await Promise.all(flood);
    const created = answers.filter((r) => r.statusCode === 201).length;
    assert.equal(created + answers.filter((r) => r.statusCode === 503).length, 150);
  });
});

/** A job whose end the test decides, recording when it started. */
function job(started: string[], name: string) {
  let finish: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    work: () => {
      started.push(name);
      return ended;
    },
    finish: () => finish(),
  };
}

/** Lets every settled promise's callbacks run (the gate hands slots over in promise callbacks). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('FairGate', () => {
  const limits = { running: 4, waiting: 1024, waitingPerTenant: 64, waitingPerCaller: 16 };

  /** Submits a job; its promise resolves to 'done' or the refusal's code. */
  function submit(gate: FairGate, turn: GateTurn, started: string[], name: string) {
    const j = job(started, name);
    const outcome = gate.run(turn, j.work).then(
      () => 'done',
      (error: unknown) => (error instanceof HeraldError ? error.code : 'error'),
    );
    return { ...j, outcome };
  }

  it("admits another tenant's job while one tenant floods it, and starts it within one turn", async () => {
    const gate = new FairGate(limits);
    const started: string[] = [];
    // 150 jobs of tenant acme from 10 callers: 4 run, 64 wait (acme's share), 82 are refused.
    const flood = Array.from({ length: 150 }, (_, i) =>
      submit(gate, { tenant: 'acme', caller: `c${i % 10}` }, started, `acme${i}`),
    );
    await settle();
    assert.equal(gate.stats('acme').waiting, 64);
    const other = submit(gate, { tenant: 'globex', caller: 'bea' }, started, 'globex');
    await settle();
    assert.equal(gate.stats('globex').waiting, 1, 'admitted, not refused');
    const refused = (await Promise.all(flood.slice(68).map((j) => j.outcome))).filter(
      (o) => o === 'UNAVAILABLE',
    );
    assert.equal(refused.length, 82);

    // Finish the running jobs one at a time: each frees a slot for the next in turn.
    const before = started.length;
    for (const name of started.slice(0, 2)) {
      flood[Number(name.slice(4))]?.finish();
      await settle();
    }
    // acme had the turn before globex arrived; globex's job is the one started right after.
    assert.deepEqual(started.slice(before), [started[before] as string, 'globex']);
    assert.match(started[before] as string, /^acme/);
    other.finish();
    for (const j of flood) j.finish();
    assert.equal(await other.outcome, 'done');
  });

  it("refuses one caller's flood to that caller, and its tenant's other callers take turns with it", async () => {
    const gate = new FairGate(limits);
    const started: string[] = [];
    const flood = Array.from({ length: 100 }, (_, i) =>
      submit(gate, { tenant: 'acme', caller: 'looper' }, started, `loop${i}`),
    );
    await settle();
    assert.equal(gate.stats('acme').waiting, 16);
    const outcomes = await Promise.all(flood.slice(20).map((j) => j.outcome));
    assert.ok(outcomes.every((o) => o === 'UNAVAILABLE'));
    const colleague = submit(gate, { tenant: 'acme', caller: 'colleague' }, started, 'colleague');
    await settle();
    assert.equal(gate.stats('acme').waiting, 17, 'admitted');
    flood[0]?.finish();
    await settle();
    flood[1]?.finish();
    await settle();
    assert.deepEqual(started.slice(4), ['loop4', 'colleague']);
    colleague.finish();
    for (const j of flood) j.finish();
  });

  it('takes tenants in turns, each tenant its jobs in the order they came', async () => {
    const gate = new FairGate({ ...limits, running: 1 });
    const started: string[] = [];
    const jobs = new Map<string, ReturnType<typeof submit>>();
    for (const name of ['a0', 'a1', 'a2', 'a3', 'b0', 'b1', 'c0']) {
      jobs.set(name, submit(gate, { tenant: name[0] as string, caller: 'x' }, started, name));
    }
    await settle();
    // One runs at a time: finishing the running one starts the next in turn.
    for (let n = 1; n < jobs.size; n++) {
      jobs.get(started.at(-1) as string)?.finish();
      await settle();
    }
    assert.deepEqual(started, ['a0', 'a1', 'b0', 'c0', 'a2', 'b1', 'a3']);
    jobs.get('a3')?.finish();
  });

  it('refuses past the overall bound even when no tenant is past its own', async () => {
    const gate = new FairGate({ running: 1, waiting: 3, waitingPerTenant: 2, waitingPerCaller: 2 });
    const started: string[] = [];
    const jobs = ['a', 'a', 'b', 'c', 'd'].map((tenant, i) =>
      submit(gate, { tenant, caller: 'x' }, started, `${tenant}${i}`),
    );
    await settle();
    assert.equal(gate.stats().waiting, 3);
    assert.equal(await jobs[4]?.outcome, 'UNAVAILABLE');
    for (const j of jobs) j.finish();
  });
});
