import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { systemClock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import { createMetrics } from '../metrics.ts';
import { createReportService } from '../notifications/reports.ts';
import { createWakeup } from '../notifications/wakeup.ts';
import { createStore } from '../store/create.ts';
import { createRenderer } from '../templates/render.ts';
import { RenderError } from '../templates/render-error.ts';
import { createRenderPool } from '../templates/render-pool.ts';
import { reply } from '../thread-calls.ts';
import { type InsertCall, insertJoined } from './joined-inserts.ts';
import { startDispatch } from './start.ts';
import type { PreviewReply, ThreadCall, ThreadReply, ThreadRequest } from './thread.ts';

/**
 * The dispatch thread's side (thread.ts has the main thread's): its own store connection, render
 * pool, reports service and metrics, and the worker role on them. On SQLite its connection is
 * the one that commits new notifications too (the `insert` requests), so every frequent write of
 * the process goes through one connection and never waits on SQLite's busy handler.
 */
const port = parentPort;
if (!port) throw new Error('thread-entry.ts runs in a worker thread');
const { config } = workerData as { config: Config };
const post = (reply: ThreadReply) => port.postMessage(reply);

// One listener from the start: requests that arrive before the worker runs wait for it, and
// `open` (the main thread has migrated the store) lets this thread open its connection. The
// modules above loaded meanwhile, in parallel with the main thread's start-up.
const early: Array<Exclude<ThreadRequest, { type: 'open' }>> = [];
let handle: ((request: Exclude<ThreadRequest, { type: 'open' }>) => void) | undefined;
let opened: () => void = () => undefined;
const open = new Promise<void>((resolve) => {
  opened = resolve;
});
const route = (request: ThreadRequest) => {
  if (request.type === 'open') opened();
  else if (handle) handle(request);
  else early.push(request);
};
port.on('message', route);

try {
  await open;
  const store = await createStore(config);
  const wakeup = createWakeup();
  // Ingest in other processes wakes this worker through the database (silent on SQLite).
  await store.wakeups.subscribe(() => wakeup.notify());
  const renderer = createRenderer(
    store,
    createRenderPool({ threads: config.renderThreads, timeoutMs: config.renderTimeoutMs }),
  );
  const metrics = createMetrics({ processMetrics: false });
  const dispatch = await startDispatch({
    config,
    store,
    clock: systemClock,
    wakeup,
    reports: createReportService(store, systemClock),
    renderer,
    metrics,
    // The main thread's live streams read the log when told (start.ts spaces the hints).
    onStatusChanged: () => post({ type: 'changed' }),
  });

  const answer = async (request: Exclude<ThreadCall, { type: 'insert' }>): Promise<unknown> => {
    switch (request.type) {
      case 'preview':
        try {
          return {
            content: await renderer.preview(request.template, request.variables),
          } satisfies PreviewReply;
        } catch (error) {
          if (!(error instanceof RenderError)) throw error;
          const { message, field, limit } = error;
          return { renderError: { message, field, limit } } satisfies PreviewReply;
        }
      case 'check':
        return renderer.checkSyntax(request.tenant, request.rank, request.sources);
      case 'metrics':
        return metrics.registry.getMetricsAsJSON();
      case 'stop':
        return dispatch.close();
      case 'close':
        await renderer.close();
        return store.close();
    }
  };

  const insertMany = (rows: InsertCall['rows'], since: number) => store.notifications.insertMany(rows, since);
  let started = false;
  /**
   * Commits this hand-over with those queued right behind it on the port (joined-inserts.ts).
   * At once, in the poll phase that brought it: the worker's next step (queued behind
   * setImmediate) then claims these rows, rather than the step after it. The first message that
   * is not an insert is handled after them, so nothing changes order.
   */
  const insertQueued = (first: Extract<ThreadCall, { type: 'insert' }>) => {
    const calls = [first];
    let next: ThreadRequest | undefined;
    // Not while the requests that came before the store opened are handled: the port holds
    // later ones, which must not overtake them.
    const queuedOne = () => (started ? receiveMessageOnPort(port) : undefined);
    for (let queued = queuedOne(); queued; queued = queuedOne()) {
      const request = queued.message as ThreadRequest;
      if (request.type !== 'insert') {
        next = request;
        break;
      }
      calls.push(request);
    }
    const outcomes = insertJoined(calls, insertMany);
    calls.forEach((call, i) => {
      reply(post, call.id, outcomes[i] as Promise<unknown>);
    });
    void Promise.allSettled(outcomes).then(() => {
      wakeup.notify();
      dispatch.statusChanged(); // their QUEUED changes
    });
    if (next) route(next);
  };

  handle = (request) => {
    if (request.type === 'wake') {
      wakeup.notify();
      return;
    }
    if (request.type === 'insert') insertQueued(request);
    else reply(post, request.id, answer(request));
  };
  for (const request of early.splice(0)) handle(request);
  started = true;
  post({ type: 'started' });
} catch (error) {
  post({ type: 'failed', error });
}
