/**
 * `fn`, called at most once every `ms`: a call after a quiet spell runs at once; calls within
 * `ms` of the last run are joined into one run at the end of that gap.
 */
export function atMostEvery(ms: number, fn: () => void): () => void {
  let ranAt = Number.NEGATIVE_INFINITY;
  let later: NodeJS.Timeout | undefined;
  const run = () => {
    later = undefined;
    ranAt = performance.now();
    fn();
  };
  return () => {
    if (later) return;
    const wait = ranAt + ms - performance.now();
    if (wait <= 0) run();
    else later = setTimeout(run, wait);
  };
}
