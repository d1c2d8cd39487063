import { type Api, requireRoute } from './api.ts';
import { type BenchPriority, batch } from './bodies.ts';
import { assertStatus, runLoad } from './load.ts';
import { progress } from './log.ts';

/** How a backlog was built. */
export interface Filled {
  count: number;
  seconds: number;
  perSecond: number;
}

/** A POST /notifications/batch body of `size` notifications (bodies.ts `batch`: emails to an address). */
export type BatchBody = (size: number, priority: BenchPriority) => string;

/**
 * Checks that POST /notifications/batch accepts every item of one batch (a 207 may refuse items
 * one by one), so a figure is never built on refused items. The batch counts toward a backlog.
 */
export async function checkBatch(
  api: Api,
  size: number,
  priority: BenchPriority,
  bodyOf: BatchBody = batch,
): Promise<void> {
  const body = JSON.parse(bodyOf(size, priority));
  const response = await requireRoute(api, 'POST', '/notifications/batch', body, 'the batch endpoint');
  const results = (response.body as { results?: Array<{ notificationId?: string; error?: unknown }> })
    .results;
  const refused = results?.find((r) => !r.notificationId);
  if (response.status !== 207 || !results || results.length !== size || refused) {
    throw new Error(
      `batch of ${size} not fully accepted: ${response.status} ${JSON.stringify(refused ?? response.body).slice(0, 400)}`,
    );
  }
}

/** Queues `count` notifications through the batch endpoint (1000 a request), printing progress. */
export async function fillBacklog(
  api: Api,
  count: number,
  priority: BenchPriority,
  what: string,
  urls: string[] = [api.url],
  bodyOf: BatchBody = batch,
): Promise<Filled> {
  const size = Math.min(1000, count);
  const started = performance.now();
  await checkBatch(api, size, priority, bodyOf);
  const requests = Math.ceil(count / size) - 1;
  if (requests > 0) {
    const every = Math.max(1, Math.round(requests / 10));
    const result = await runLoad(
      {
        urls,
        method: 'POST',
        path: '/notifications/batch',
        headers: api.auth,
        body: bodyOf(size, priority),
        connections: Math.min(4, requests),
        amount: requests,
        timeoutSeconds: 120,
        progressEvery: every,
      },
      (done) =>
        progress(
          `${what}: ${((done + 1) * size).toLocaleString('en-US')} of ${count.toLocaleString('en-US')} queued`,
        ),
    );
    assertStatus(result, 207, `${what} batches`);
  }
  const seconds = (performance.now() - started) / 1000;
  const total = (requests + 1) * size;
  progress(`${what}: ${total.toLocaleString('en-US')} queued in ${seconds.toFixed(1)} s`);
  return { count: total, seconds, perSecond: total / seconds };
}
