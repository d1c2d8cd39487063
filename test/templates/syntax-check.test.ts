import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { Liquid } from 'liquidjs';
import type { HeraldError } from '../../src/errors.ts';
import { liquidSources } from '../../src/templates/fields.ts';
import { createRenderer, type SyntaxVerdict } from '../../src/templates/render.ts';
import { createRenderPool } from '../../src/templates/render-pool.ts';
import { createSyntaxCheck } from '../../src/templates/syntax-check.ts';
import { email, notificationsApp, send, sms } from '../notifications/fixtures.ts';

/** About 2 KB of Liquid, different for each `i`: no verdict is known for it. */
const distinct = (i: number) =>
  `Hi {{ name }} #${i}` +
  `{% if n > ${i} %}{{ n | plus: ${i} }}{% else %}{{ name | upcase }}{% endif %}`.repeat(25);

// Parsing inline Liquid costs about a millisecond per KB: a batch of 1,000 distinct 7.8 KB
// sources parsed on the API's event loop held GET /health for seconds. The parse belongs to the
// render threads (issue 46, item 1), whose jobs take turns by tenant.
describe('Liquid syntax check off the event loop', () => {
  let t: Awaited<ReturnType<typeof notificationsApp>>;
  // Every Liquid parse made on this thread (the render threads load liquidjs on their own).
  const parses = mock.method(Liquid.prototype, 'parse');
  before(async () => {
    t = await notificationsApp({ HERALD_BATCH_BODY_LIMIT: String(4 * 1024 * 1024) });
  });
  after(async () => {
    mock.restoreAll();
    await t.close();
  });

  it('parses a batch of distinct sources in the render threads, while /health and another tenant are answered first', async () => {
    const items = Array.from({ length: 200 }, (_, i) =>
      email({ content: { subject: 'Hi', text: distinct(i) }, variables: { name: 'Ada', n: i } }),
    );
    items[7] = sms({ content: { text: 'Hi {{ name' } });
    items[8] = email({ content: { subject: 'Hi', text: distinct(0) }, variables: { name: 'Ada', n: 0 } }); // a source repeated
    const finished: string[] = [];
    const batch = t.app
      .inject({
        method: 'POST',
        url: '/notifications/batch',
        headers: t.sender,
        payload: { notifications: items },
      })
      .then((r) => {
        finished.push('batch');
        return r;
      });
    // Sent once the batch is being checked: they wait neither for its parses nor behind them.
    await new Promise((resolve) => setImmediate(resolve));
    const [health, other] = await Promise.all([
      t.app.inject({ method: 'GET', url: '/health' }).then((r) => {
        finished.push('health');
        return r;
      }),
      send(
        t.app,
        t.other,
        sms({ content: { text: 'Your code is {{ code }}' }, variables: { code: 1 } }),
      ).then((r) => {
        finished.push('other tenant');
        return r;
      }),
    ]);
    assert.equal(health.statusCode, 200);
    assert.equal(other.statusCode, 201, other.body);
    const response = await batch;
    assert.equal(finished.at(-1), 'batch', `the batch answers last: ${finished.join(', ')}`);
    assert.equal(response.statusCode, 207);
    const { results } = response.json();
    assert.equal(results[7].error.code, 'VALIDATION_FAILED');
    assert.equal(results[7].error.errors[0].path, 'body/notifications/7/content/text');
    assert.match(results[7].error.errors[0].message, /^must be valid Liquid: /);
    const queued = results.filter((r: { status?: string }) => r.status === 'QUEUED').length;
    assert.equal(queued, 199);
    assert.equal(parses.mock.callCount(), 0, 'no Liquid was parsed on the thread that answers requests');
  });

  it('checks a template at save in the render threads too, with the same answer', async () => {
    const bad = await t.app.inject({
      method: 'POST',
      url: '/templates',
      headers: t.admin,
      payload: { key: 'bad', channel: 'sms', text: '{% if x %}no end' },
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().errors[0].path, 'body/text');
    assert.match(bad.json().errors[0].message, /^must be valid Liquid: .*if/);
    const inline = await send(t.app, t.sender, sms({ content: { text: '{% if x %}no end' } }));
    assert.equal(inline.statusCode, 400);
    assert.deepEqual(inline.json().errors, [{ ...bad.json().errors[0], path: 'body/content/text' }]);
    assert.equal(parses.mock.callCount(), 0);
  });
});

describe('Liquid syntax verdicts', () => {
  const item = (source: string) => ({
    sources: liquidSources({ text: source }),
    prefix: 'body/content',
    rank: 2,
  });

  it('remembers a real syntax error, but never a check the pool could not run', async () => {
    // A real pool: closed, it cannot run the check; open, it parses.
    const closedPool = createRenderPool({ threads: 1, timeoutMs: 100 });
    await closedPool.close();
    const answers: SyntaxVerdict[][] = [];
    const renderer = createRenderer(undefined as never, closedPool);
    const recorded = {
      async checkSyntax(...args: Parameters<typeof renderer.checkSyntax>) {
        const verdicts = await current.checkSyntax(...args);
        answers.push(verdicts);
        return verdicts;
      },
    };
    let current = renderer;
    const check = createSyntaxCheck(recorded);
    await assert.rejects(check('acme', [item('Hi {{ name }}')]), (error: HeraldError) => {
      assert.equal(error.code, 'UNAVAILABLE');
      return true;
    });
    const pool = createRenderPool({ threads: 1, timeoutMs: 100 });
    try {
      current = createRenderer(undefined as never, pool);
      // The same source again: checked anew (nothing was remembered), and it parses.
      assert.deepEqual(await check('acme', [item('Hi {{ name }}')]), [[]]);
      const broken = await check('acme', [item('Hi {{ name ')]);
      assert.match(broken[0]?.[0]?.message ?? '', /^must be valid Liquid/);
      const checksBefore = answers.length;
      // A real syntax error is the source's own: remembered, not parsed again.
      assert.deepEqual(await check('globex', [item('Hi {{ name ')]), broken);
      assert.equal(answers.length, checksBefore);
      assert.equal(answers[0]?.[0] !== null && 'unavailable' in (answers[0]?.[0] ?? {}), true);
    } finally {
      await pool.close();
    }
  });
});
