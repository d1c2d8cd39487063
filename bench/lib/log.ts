/** Progress lines for long scenarios, on stderr so the table on stdout stays clean. */
const started = Date.now();

let quiet = false;

/** Silences progress lines (the smoke test keeps its output short). */
export function setQuiet(value: boolean): void {
  quiet = value;
}

/** Prints one progress line with the time since the bench started. */
export function progress(message: string): void {
  if (quiet) return;
  const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[${seconds}s] ${message}\n`);
}
