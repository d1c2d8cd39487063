import { baseEnv, spawnNode } from './proc.ts';

/**
 * Probes `GET {url}/health` every `everyMs` from a process of its own (bench/health-prober.ts)
 * until stopped; resolves with each probe's time in ms, and how many failed (their time is kept
 * too). Stop it however the caller ends: it would otherwise probe a stopped server until the
 * bench exits.
 */
export function probeHealth(
  url: string,
  everyMs: number,
): { stop(): Promise<{ ms: number[]; failed: number }> } {
  const child = spawnNode(
    ['--import', 'tsx', 'bench/health-prober.ts', url, String(everyMs)],
    baseEnv(),
    'health prober',
  );
  let result: { ms: number[]; failed: number } | undefined;
  child.onLine((line) => {
    if (line.startsWith('RESULT ')) result = JSON.parse(line.slice(7)) as { ms: number[]; failed: number };
  });
  const ready = child.waitForLine(/^READY$/, 60_000);
  let stopped: Promise<{ ms: number[]; failed: number }> | undefined;
  return {
    stop() {
      stopped ??= ready
        .then(() => child.stop())
        .then(() => {
          if (!result) throw new Error(`the health prober printed no result:\n${child.tail()}`);
          return result;
        });
      return stopped;
    },
  };
}
