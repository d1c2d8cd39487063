/**
 * Waits until `condition` holds, polling every `everyMs`; fails naming `what` after `ms` (a
 * generous bound, not a speed check).
 */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  ms = 10_000,
  what = 'condition',
  everyMs = 10,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
