// A reporter for scripts/run-tests.mjs: after the TAP stream, the slowest test files by wall time,
// so that each run (a CI log's tail) ranks what the suite spends (docs/decisions/0016-ci-time.md).
// The files run one at a time, so a file's time is from the previous file's last event to its own
// last: its process start and imports included, which no test's duration_ms counts.
const SHOWN = 25;

export default async function* times(source) {
  const files = new Map();
  let last = Date.now();
  for await (const event of source) {
    const file = event.data?.file;
    if (!file) continue;
    const now = Date.now();
    files.set(file, (files.get(file) ?? 0) + (now - last));
    last = now;
  }
  if (files.size === 0) return;
  const total = [...files.values()].reduce((sum, ms) => sum + ms, 0);
  const slowest = [...files].sort((a, b) => b[1] - a[1]).slice(0, SHOWN);
  const root = `${process.cwd()}/`;
  const lines = slowest.map(
    ([file, ms]) => `#  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file.replace(root, '')}`,
  );
  // One chunk: the failures reporter writes to stdout too, and its list must stay the last lines.
  yield `\n# ${files.size} files in ${(total / 1000).toFixed(0)} s; the slowest ${slowest.length}:\n${lines.join('\n')}\n`;
}
