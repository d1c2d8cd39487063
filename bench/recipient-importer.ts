/**
 * The recipients-import scenario's client, in its own process: sends `total` distinct recipients
 * through POST /recipients/batch, `batch` a request, over `connections` requests in flight at
 * once (a closed loop: each connection sends its next batch when its answer came), and checks
 * every item's result. Reads an ImporterSpec (JSON file named by argv[2]); prints one
 * "RESULT <json>" line (an ImporterResult). The bodies are built before the clock starts.
 */
import { readSpec, runScript } from './lib/proc.ts';
import type { ImporterResult, ImporterSpec } from './scenarios/recipients-import.ts';

/**
 * A batch body of `size` distinct recipients, the n-th batch of a run tagged `tag`; `pad`
 * characters more in each one's `data` (large bodies: 7,200 makes 1,000 items about 6.9 MiB).
 */
function body(tag: string, n: number, size: number, pad = 0): string {
  const items: string[] = [];
  const note = pad > 0 ? `,"note":"${'x'.repeat(pad)}"` : '';
  for (let i = 0; i < size; i++) {
    const id = `${tag}-${n}-${i}`;
    items.push(
      `{"recipientId":"${id}","email":"${id}@example.com","locale":"en-US","timezone":"America/New_York","name":"Recipient ${i}","data":{"plan":"pro"${note}}}`,
    );
  }
  return `{"recipients":[${items.join(',')}]}`;
}

runScript(async () => {
  const spec = readSpec<ImporterSpec>();
  const batches = Math.ceil(spec.total / spec.batch);
  const bodies = Array.from({ length: batches }, (_, n) => body(spec.tag, n, spec.batch, spec.pad));
  const result: ImporterResult = { recipients: 0, seconds: 0, statuses: {}, failures: [] };
  let next = 0;
  const connection = async () => {
    for (let n = next++; n < batches; n = next++) {
      const response = await fetch(`${spec.url}/recipients/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${spec.token}` },
        body: bodies[n],
      });
      const text = await response.text();
      if (response.status !== 207) {
        if (result.failures.length < 3) result.failures.push(`${response.status} ${text.slice(0, 300)}`);
        continue;
      }
      for (const item of (JSON.parse(text) as { results: Array<{ status?: number }> }).results) {
        const status = String(item.status ?? 'refused');
        result.statuses[status] = (result.statuses[status] ?? 0) + 1;
        if (item.status === 200 || item.status === 201) result.recipients++;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: spec.connections }, connection));
  result.seconds = (performance.now() - started) / 1000;
  console.log(`RESULT ${JSON.stringify(result)}`);
});
