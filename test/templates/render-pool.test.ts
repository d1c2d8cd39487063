import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createRenderPool, type RenderOutcome } from '../../src/templates/render-pool.ts';

/** 72 KiB of text, then one output tag whose filter chain runs long inside that single node. */
const ONE_LONG_NODE = `{% assign s = "abcdefghijklmnopqrstuvwxyz0123456789" %}{% for i in (1..11) %}{% assign s = s | append: s %}{% endfor %}{{ s ${'| replace: "a", "b" | replace: "b", "a" '.repeat(3000)} | size }}`;
/** Many short nodes: Liquid checks its cut-off between them. */
const MANY_NODES = '{% for i in (1..10000) %}{% for j in (1..10000) %}{% endfor %}{% endfor %}';

describe('render pool', () => {
  const pool = createRenderPool({ threads: 1, timeoutMs: 100 });
  after(() => pool.close());
  const render = (text: string, key = text): Promise<RenderOutcome> =>
    pool.run({ key, content: { text }, variables: { name: 'Ada' } }, 2);

  it('renders', async () => {
    assert.deepEqual(await render('Hi {{ name }}'), { ok: true, content: { text: 'Hi Ada' } });
  });

  it('lets Liquid stop a render of many nodes at its cut-off, and the thread goes on', async () => {
    const cut = await render(MANY_NODES);
    assert.deepEqual(cut, {
      ok: false,
      limit: true,
      message: 'text: rendering ran out of time',
    });
    assert.deepEqual(await render('Hi {{ name }}', 'again'), { ok: true, content: { text: 'Hi Ada' } });
  });

  it('terminates a thread stuck inside one node at the deadline, and a new thread takes the next job', async () => {
    const cut = await render(ONE_LONG_NODE);
    assert.deepEqual(cut, { ok: false, limit: true, message: 'rendering ran out of time (100 ms)' });
    assert.deepEqual(await render('Bye {{ name }}'), { ok: true, content: { text: 'Bye Ada' } });
  });
});
