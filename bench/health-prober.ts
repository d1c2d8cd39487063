/**
 * Probes `GET <url>/health` from its own process, one request at a time with `everyMs` between
 * them, until SIGTERM; then prints one "RESULT <json>" line ({ ms, failed }) and exits. Its own
 * process, so that its times are Herald's answer and not the wait of a busy bench process (one
 * that also reads 100 live streams). The first half second warms up (loading Node's HTTP client)
 * and is not kept. Usage: health-prober.ts <url> <everyMs>.
 */
const [url, every] = process.argv.slice(2);
const everyMs = Number(every);
const ms: number[] = [];
let failed = 0;
let probing = true;
const warm = performance.now() + 500;

process.once('SIGTERM', () => {
  probing = false;
});
// The parent stops this only after this line: a SIGTERM before the handler would kill it silently.
console.log('READY');

// At least one probe is kept, however soon it is stopped.
while (probing || ms.length === 0) {
  const start = performance.now();
  let ok = true;
  await fetch(`${url}/health`)
    .then((r) => r.arrayBuffer())
    .catch(() => {
      ok = false;
    });
  if (start >= warm || !probing) {
    ms.push(performance.now() - start);
    if (!ok) failed += 1;
  }
  if (probing) await new Promise((resolve) => setTimeout(resolve, everyMs));
}
console.log(`RESULT ${JSON.stringify({ ms, failed })}`);
// Idle keep-alive sockets would hold the process for seconds more.
process.exit(0);
