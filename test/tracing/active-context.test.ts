// Which thread runs the AsyncLocalStorage context manager when tracing is on (decision 0044):
// its promise hooks cost every promise the thread makes, so the API's thread, whose handlers
// get their server span by hand (http/trace-hooks.ts `requestSpan`), runs none; a thread that
// dispatches keeps it (render and the provider calls are children of `process` through it).
// Herald runs in this test's thread; whether the traces still hold is test/tracing/otlp.test.ts.
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

describe('the active context with tracing on', () => {
  it("runs no context manager in the API's thread when a dispatch thread does the work", async () => {
    const otlp = await startOtlpReceiver();
    // Without a worker in this process, as HERALD_DISPATCH_THREAD's thread leaves the API's.
    const herald = await startHerald(
      testConfig({ HERALD_ROLES: 'auth,api', OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url }),
    );
    try {
      assert.equal(await carriedAcrossAwait(), false, 'no AsyncLocalStorage context manager');
    } finally {
      await herald.close();
      await otlp.close();
    }
  });

  it('runs one in a thread that dispatches', async () => {
    const otlp = await startOtlpReceiver();
    // testConfig's HERALD_DISPATCH_THREAD=false: the worker dispatches in this thread.
    const herald = await startHerald(
      testConfig({ HERALD_ROLES: 'auth,api,worker', OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url }),
    );
    try {
      assert.equal(await carriedAcrossAwait(), true, 'the context manager carries the context');
    } finally {
      await herald.close();
      await otlp.close();
    }
  });
});
