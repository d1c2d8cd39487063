import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { osThreadId, threadCpu } from '../../src/os-thread.ts';
import { createRenderPool, type RenderOutcome } from '../../src/templates/render-pool.ts';
import { eventually } from '../helpers/eventually.ts';

/**
 * Nearly the 1,000,000 characters Liquid parses: parsing it takes about a second of CPU, and
 * Liquid's cut-off counts only rendering, so the thread answers nothing meanwhile (as with a
 * tight loop inside one node).
 */
const LONG_PARSE = '{% if name %}{{ name | upcase | downcase }}{% endif %}'.repeat(18_000);
/** Many short nodes: Liquid checks its cut-off between them. */
const MANY_NODES = '{% for i in (1..10000) %}{% for j in (1..10000) %}{% endfor %}{% endfor %}';

describe('render pool', () => {
  const pool = createRenderPool({ threads: 1, timeoutMs: 100 });
  after(() => pool.close());
  const render = (text: string, key = text): Promise<RenderOutcome> =>
    pool.run({ tenant: 'acme', key, content: { text }, variables: { name: 'Ada' } }, 2);

  it('renders', async () => {
    assert.deepEqual(await render('Hi {{ name }}'), { ok: true, content: { text: 'Hi Ada' } });
  });

  it('fails a job that cannot be posted to a thread alone, and the thread takes the next', async () => {
    let deep: unknown[] = [];
    for (let i = 0; i < 12_000; i++) deep = [deep];
    const refused = await pool.run(
      { tenant: 'acme', key: 'deep', content: { text: '{{ d }}' }, variables: { d: deep } },
      2,
    );
    assert.equal(refused.ok, false);
    assert.match((refused as { message: string }).message, /cannot be handed to a thread: RangeError/);
    assert.deepEqual(await render('Hi again {{ name }}'), { ok: true, content: { text: 'Hi again Ada' } });
  });

  it('lets Liquid stop a render of many nodes at its cut-off, and the thread goes on', async () => {
    // A deadline long enough that Liquid's cut-off (3/4 of it) wins on a busy machine too: with
    // 100 ms, 25 ms of scheduling delay let the pool's deadline end the thread first.
    const roomy = createRenderPool({ threads: 1, timeoutMs: 1000 });
    after(() => roomy.close());
    const cut = await roomy.run(
      { tenant: 'acme', key: MANY_NODES, content: { text: MANY_NODES }, variables: {} },
      2,
    );
    assert.deepEqual(cut, {
      ok: false,
      limit: true,
      message: 'text: rendering ran out of time',
    });
    assert.deepEqual(
      await roomy.run(
        { tenant: 'acme', key: 'again', content: { text: 'Hi {{ name }}' }, variables: { name: 'Ada' } },
        2,
      ),
      {
        ok: true,
        content: { text: 'Hi Ada' },
      },
    );
  });

  it('terminates a thread that has had its time on a CPU, and a new thread takes the next job', async () => {
    const cut = await render(LONG_PARSE);
    assert.deepEqual(cut, { ok: false, limit: true, message: 'rendering ran out of time (100 ms)' });
    assert.deepEqual(await render('Bye {{ name }}'), { ok: true, content: { text: 'Bye Ada' } });
  });
});

describe('render pool, a thread kept off the CPU', () => {
  // The thread's CPU clock as the test sets it: a thread the cores did not run has had none.
  let cpuMs = 0;
  let clocks = 0;
  const pool = createRenderPool({
    threads: 1,
    timeoutMs: 20,
    cpuClock: () => {
      clocks += 1;
      return { ms: () => cpuMs, close() {} };
    },
  });
  after(() => pool.close());

  it('is not terminated at the deadline, but is once it has had its time on a CPU', async () => {
    await pool.run({ tenant: 'acme', key: 'warm', content: { text: 'Hi' }, variables: {} }, 2);
    // The thread and its warm spare are ready (each opened its CPU clock).
    await eventually(() => clocks === 2, 10_000, 'both threads ready');
    assert.equal(clocks, 2);
    let outcome: RenderOutcome | undefined;
    const running = pool
      .run({ tenant: 'acme', key: 'long', content: { text: LONG_PARSE }, variables: { name: 'Ada' } }, 2)
      .then((o) => {
        outcome = o;
      });
    // Five deadlines later the thread, which by its clock has not run, is still at it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(outcome, undefined);
    // Now it has had its 20 ms: the next look ends it, and a new thread is started.
    cpuMs = 1000;
    await running;
    assert.deepEqual(outcome, { ok: false, limit: true, message: 'rendering ran out of time (20 ms)' });
    assert.equal(
      await pool
        .run({ tenant: 'acme', key: 'after', content: { text: 'Bye' }, variables: {} }, 2)
        .then((o) => o.ok),
      true,
    );
    await eventually(() => clocks === 3, 10_000, 'a new thread ready');
    assert.equal(clocks, 3);
  });

  it('ends a job kept off the CPU for ten deadlines as busy, not as past its limit', async () => {
    // The clock stands still from here: the thread never has its time.
    const outcome = await pool.run(
      { tenant: 'acme', key: 'kept-off', content: { text: LONG_PARSE }, variables: { name: 'Ada' } },
      2,
    );
    assert.deepEqual(outcome, {
      ok: false,
      limit: false,
      busy: true,
      message: 'rendering could not get a CPU within 200 ms',
    });
  });
});

describe('render pool, tenants of one priority', () => {
  it("takes their waiting jobs in turns: one tenant's backlog delays another's by one job, not all", async () => {
    const pool = createRenderPool({ threads: 1, timeoutMs: 2000 });
    after(() => pool.close());
    const done: string[] = [];
    const job = (tenant: string, name: string) =>
      pool
        .run(
          {
            tenant,
            key: `${tenant}/${name}`,
            content: { text: '{% for i in (1..10000) %}{{ i }}{% endfor %}' },
            variables: {},
          },
          2,
        )
        .then((outcome) => {
          assert.equal(outcome.ok, true);
          done.push(name);
        });
    await job('warm', 'warm-up'); // a thread ready, so flood-1 starts as it comes
    done.length = 0;
    const flood = Array.from({ length: 6 }, (_, i) => job('flood', `flood-${i + 1}`));
    await Promise.all([...flood, job('other', 'other')]);
    // flood-1 was running and flood-2 had its turn before `other` came; then `other`'s turn.
    assert.deepEqual(done, ['flood-1', 'flood-2', 'other', 'flood-3', 'flood-4', 'flood-5', 'flood-6']);
  });
});

describe('render pool, threads kept for CRITICAL and HIGH', () => {
  /** A thread's nice value, from /proc (field 19 of its stat line). */
  const niceOf = (tid: number) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  };
  const RUNAWAY = '{% for i in (1..10000) %}{% for j in (1..4000) %}{% endfor %}{% endfor %}';

  it('renders a CRITICAL at the process priority while runaway NORMAL renders run at nice 10', {
    skip: process.platform !== 'linux',
  }, async () => {
    const tids: number[] = [];
    const pool = createRenderPool({
      threads: 2,
      timeoutMs: 1000,
      cpuClock: (tid) => {
        if (tid !== undefined) tids.push(tid);
        return threadCpu(tid);
      },
    });
    after(() => pool.close());
    await pool.run({ tenant: 'warm', key: 'warm', content: { text: '{{ a }}' }, variables: { a: 1 } }, 2);
    await eventually(() => tids.length === 3, 20_000, 'three threads ready');
    // One thread kept for CRITICAL and HIGH, at the process's priority; two (one a spare) at 10 more.
    const base = niceOf(osThreadId() as number);
    assert.deepEqual(
      tids.map(niceOf).sort((a, b) => a - b),
      [base, Math.max(base, 10), Math.max(base, 10)],
    );
    const ended: string[] = [];
    const runaway = Array.from({ length: 6 }, (_, i) =>
      pool
        .run({ tenant: 'heavy', key: `r${i}`, content: { text: RUNAWAY }, variables: {} }, 2)
        .then((o) => ended.push(o.ok ? 'ok' : 'cut')),
    );
    const critical = await pool.run(
      { tenant: 'urgent', key: 'c', content: { text: 'Code {{ a }}' }, variables: { a: 7 } },
      0,
    );
    assert.deepEqual(critical, { ok: true, content: { text: 'Code 7' } });
    assert.ok(ended.length < 6, 'the CRITICAL was rendered while the runaway renders still ran');
    await Promise.all(runaway);
  });
});

describe('render pool, closed while it renders', () => {
  it('answers the running job and the waiting ones that the pool is closed', async () => {
    const pool = createRenderPool({ threads: 1, timeoutMs: 10_000 });
    await pool.run({ tenant: 'acme', key: 'warm', content: { text: 'Hi' }, variables: {} }, 2);
    const job = (key: string) =>
      pool.run({ tenant: 'acme', key, content: { text: LONG_PARSE }, variables: {} }, 2);
    const running = job('running');
    const waiting = job('waiting');
    // The running job's thread ends under it: its outcome is the pool's, not the thread's.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await pool.close();
    const closed = { ok: false, limit: false, message: 'the render pool is closed' };
    assert.deepEqual(await running, closed);
    assert.deepEqual(await waiting, closed);
    assert.deepEqual(await job('after'), closed);
  });
});
