/**
 * Sends one POST /notifications every `everyMs` for `forMs` from its own process, without
 * waiting for earlier answers (an open-loop sender, so a slow answer does not delay the next
 * send). Reads a PacedSpec (JSON file named by argv[2]); prints one "RESULT <json>" line (PacedResult).
 */
import type { PacedResult, PacedSpec } from './lib/paced.ts';
import { readSpec } from './lib/proc.ts';

const spec = readSpec<PacedSpec>();
const result: PacedResult = { sent: 0, accepted: [], failures: [] };
const pending: Promise<void>[] = [];

async function send(): Promise<void> {
  const started = performance.now();
  try {
    const response = await fetch(`${spec.url}/notifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...spec.headers },
      body: spec.body,
    });
    const body = (await response.json()) as { notificationId?: string; createdAt?: string };
    if (response.status === 201 && body.notificationId) {
      result.accepted.push({
        id: body.notificationId,
        createdAt: body.createdAt ?? '',
        responseMs: performance.now() - started,
      });
    } else if (result.failures.length < 5) {
      result.failures.push(`${response.status} ${JSON.stringify(body).slice(0, 300)}`);
    }
  } catch (error) {
    if (result.failures.length < 5) result.failures.push((error as Error).message);
  }
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
console.log(`RESULT ${JSON.stringify(result)}`);
