/**
 * Runs `body` and returns the process warnings emitted meanwhile. Node emits a warning on a
 * later tick than the call that caused it, so the listener stays one more turn of the loop.
 */
export async function warningsDuring(body: () => Promise<void>): Promise<Error[]> {
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  try {
    await body();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  return warnings;
}
