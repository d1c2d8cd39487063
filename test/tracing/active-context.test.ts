// No thread runs the AsyncLocalStorage context manager when tracing is on (decision 0044): its
// promise hooks cost every promise the thread makes. Every span's parent is passed by hand: the
// request's server span (http/trace-hooks.ts `requestSpan`), a notification's `process` span
// (tracing/tracer.ts `processContext`). Herald runs in this test's thread, dispatching there
// too; that the traces still hold together is test/tracing/otlp.test.ts and postgres.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { context, createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { startHerald } from '../../src/main.ts';
import { testConfig } from '../helpers/config.ts';
import { startOtlpReceiver } from '../helpers/peers/otlp.ts';

/** Whether a context entered here is still the active one after an await. */
async function carriedAcrossAwait(): Promise<boolean> {
  const key = createContextKey('probe');
  const entered = ROOT_CONTEXT.setValue(key, true);
  return context.with(entered, async () => {
    await new Promise((resolve) => setImmediate(resolve));
    return context.active().getValue(key) === true;
  });
}

describe('tracing on', () => {
  it('runs no context manager, in the API and the worker alike', async () => {
    const otlp = await startOtlpReceiver();
    // testConfig's HERALD_DISPATCH_THREAD=false: the API and the worker both run in this thread.
    const herald = await startHerald(
      testConfig({ HERALD_ROLES: 'auth,api,worker', OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url }),
    );
    try {
      assert.equal(await carriedAcrossAwait(), false, 'no AsyncLocalStorage context manager');
    } finally {
      await herald.close();
      await otlp.close();
    }
  });
});
