/**
 * Sends one POST every `everyMs` for `forMs` from its own process, without waiting for earlier
 * answers (an open-loop sender: a slow answer does not delay the next send, unlike a closed-loop
 * load generator). Works for POST /notifications (201) and /notifications/batch (207).
 * Reads a PacedSpec (JSON file named by argv[2]); prints one "RESULT <json>" line (PacedResult).
 */
import type { PacedResult, PacedSpec } from './lib/paced.ts';
import { readSpec } from './lib/proc.ts';

interface Accepted {
  notificationId?: string;
  createdAt?: string;
  results?: Array<{ notificationId?: string }>;
}

const spec = readSpec<PacedSpec>();
const result: PacedResult = { sent: 0, acceptedCount: 0, accepted: [], failures: [] };
const pending: Promise<void>[] = [];

function fail(message: string): void {
  if (result.failures.length < 5) result.failures.push(message);
}

async function send(): Promise<void> {
  const started = performance.now();
  try {
    const response = await fetch(`${spec.url}${spec.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...spec.headers },
      body: spec.body,
    });
    const body = (await response.json()) as Accepted;
    if (response.status === 201 && body.notificationId) {
      result.acceptedCount++;
      if (spec.collect) {
        result.accepted.push({
          id: body.notificationId,
          createdAt: body.createdAt ?? '',
          responseMs: performance.now() - started,
        });
      }
    } else if (response.status === 207 && body.results) {
      const ok = body.results.filter((r) => r.notificationId).length;
      result.acceptedCount += ok;
      if (ok < body.results.length) fail(`207 with ${body.results.length - ok} refused items`);
    } else {
      fail(`${response.status} ${JSON.stringify(body).slice(0, 300)}`);
    }
  } catch (error) {
    fail((error as Error).message);
  }
}

// Warm up first, for WARM_UP_MS: the first requests load Node's HTTP client and compile its path,
// CPU on the cores Herald shares with this process that would otherwise fall in the first second
// of the measured window (and show up as Herald's latency, not the sender's).
const WARM_UP_MS = 500;
const warmUpEnd = performance.now() + WARM_UP_MS;
while (performance.now() < warmUpEnd) {
  await fetch(`${spec.url}/health`)
    .then((response) => response.arrayBuffer())
    .catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 2));
}

const count = Math.max(1, Math.floor(spec.forMs / spec.everyMs));
const start = performance.now();
for (let i = 0; i < count; i++) {
  // Schedules against the start time, so timer drift does not accumulate.
  const wait = start + i * spec.everyMs - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  result.sent++;
  pending.push(send());
}
await Promise.all(pending);
result.seconds = (performance.now() - start) / 1000;
console.log(`RESULT ${JSON.stringify(result)}`);
