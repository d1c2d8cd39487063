/**
 * Probes `GET {url}/health` from the bench process, one request at a time with `everyMs` between
 * them, until stopped; resolves with each probe's time in ms. A probe that fails counts as the
 * time it took, and is counted apart.
 */
export function probeHealth(
  url: string,
  everyMs: number,
): { stop(): Promise<{ ms: number[]; failed: number }> } {
  const ms: number[] = [];
  let failed = 0;
  let probing = true;
  const probes = (async () => {
    while (probing) {
      const start = performance.now();
      await fetch(`${url}/health`)
        .then((r) => r.arrayBuffer())
        .catch(() => {
          failed += 1;
        });
      ms.push(performance.now() - start);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      probing = false;
      await probes;
      return { ms, failed };
    },
  };
}
