// A render whose thread never had its time on a CPU (the cores busy with other work) says nothing
// of its template: the syntax check at acceptance and a preview answer 503 UNAVAILABLE with
// Retry-After (retry shortly), not 400 or 422 for a template that is fine. The thread's CPU clock
// is the test's (render-pool.test.ts does the same): it stands still, as for a thread kept off the
// cores.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { HeraldError } from '../../src/errors.ts';
import { liquidSources } from '../../src/templates/fields.ts';
import { createRenderer } from '../../src/templates/render.ts';
import { createRenderPool } from '../../src/templates/render-pool.ts';
import { createSyntaxCheck } from '../../src/templates/syntax-check.ts';

/** Liquid that parses for longer than the deadline without a point where Liquid can cut it. */
const LONG_PARSE = '{% if name %}{{ name | upcase | downcase }}{% endif %}'.repeat(18_000);

describe('a render kept off the CPU', () => {
  const pool = createRenderPool({
    threads: 1,
    timeoutMs: 20,
    cpuClock: () => ({ ms: () => 0, close() {} }),
  });
  after(() => pool.close());
  const renderer = createRenderer(undefined as never, pool);

  const isBusy = (error: unknown) => {
    assert.ok(error instanceof HeraldError, String(error));
    assert.equal(error.code, 'UNAVAILABLE');
    assert.equal(error.retryAfterS, 1);
    return true;
  };

  it('fails the syntax check as unavailable, remembering nothing', async () => {
    const check = createSyntaxCheck(renderer);
    const sources = liquidSources({ text: LONG_PARSE });
    await assert.rejects(check('acme', [{ sources, prefix: 'body/content', rank: 2 }]), isBusy);
  });

  it('fails a preview as unavailable, not as a render limit', async () => {
    await assert.rejects(
      renderer.preview(
        {
          tenant: 'acme',
          key: 'welcome',
          version: 1,
          channel: 'sms',
          content: { text: LONG_PARSE },
        } as never,
        { name: 'Ada' },
      ),
      isBusy,
    );
  });
});
