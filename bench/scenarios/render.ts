import { parseContent, renderParsed } from '../../src/templates/liquid.ts';
import { createRenderPool } from '../../src/templates/render-pool.ts';
import { progress } from '../lib/log.ts';
import { measured } from '../lib/report.ts';
import { median } from '../lib/stats.ts';
import type { Scenario } from './types.ts';

/** A realistic email template: a few variables, a loop, HTML escaping. */
const CONTENT = {
  subject: 'Your order {{ order.id }} has shipped, {{ name }}',
  text: 'Hi {{ name }},{% for item in order.items %}\n- {{ item.title }} x{{ item.qty }}{% endfor %}\nThanks!',
  html: '<p>Hi {{ name }},</p><ul>{% for item in order.items %}<li>{{ item.title }} x{{ item.qty }}</li>{% endfor %}</ul>',
};
const variables = (i: number) => ({
  name: `Ada <${i}>`,
  order: {
    id: `A-${i}`,
    items: [
      { title: 'Lamp & shade', qty: 1 },
      { title: 'Bulb', qty: 4 },
    ],
  },
});

const ROUNDS = 3;

/**
 * What rendering off the event loop costs per notification (issue 11): the same template
 * rendered `sizes.render.count` times (20,000; 500 with --quick, whose figures mean nothing) on
 * the loop (what Herald did before) and through the worker-thread pool (what it does now), with
 * the pool kept full the way the scheduler keeps it (many renders in flight). Content without
 * Liquid markup never reaches the pool, so plain notifications (the dispatch scenario's) pay
 * nothing.
 */
export const renderScenario: Scenario = {
  name: 'render',
  title: 'Liquid rendering: on the event loop vs in the worker-thread pool (per notification)',
  async run(options) {
    const { count } = options.sizes.render;
    const parsed = parseContent(CONTENT);
    const pool = createRenderPool({ threads: 2, timeoutMs: 1000 });
    try {
      await pool.run({ tenant: 'bench', key: 'warm', content: CONTENT, variables: variables(0) }, 2);
      const inLoop: number[] = [];
      const inPool: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        progress(`render: round ${round + 1} of ${ROUNDS}`);
        let start = performance.now();
        for (let i = 0; i < count; i++) renderParsed(parsed, variables(i));
        inLoop.push(((performance.now() - start) * 1000) / count);
        start = performance.now();
        // CRITICAL rank: all threads (bulk ranks are held to their share).
        await Promise.all(
          Array.from({ length: count }, (_, i) =>
            pool.run({ tenant: 'bench', key: 'order-shipped', content: CONTENT, variables: variables(i) }, 0),
          ),
        );
        inPool.push(((performance.now() - start) * 1000) / count);
      }
      const loop = median(inLoop);
      const threads = median(inPool);
      return [
        measured('render', 'on the event loop (before)', loop, 'µs/notification'),
        measured('render', 'worker-thread pool, 2 threads (now)', threads, 'µs/notification', {
          note: 'wall time per render with the pool kept busy; the event loop is free meanwhile',
        }),
        measured('render', 'pool / loop', threads / loop, 'ratio'),
      ];
    } finally {
      await pool.close();
    }
  },
};
