import { assertStatus, type LoadResult, type LoadSpec, runLoad } from './load.ts';
import { progress } from './log.ts';
import type { RoundSize } from './options.ts';

/** The results of alternating rounds: Herald's and the reference's, pair by pair. */
export interface Rounds {
  herald: LoadResult[];
  reference: LoadResult[];
  /** herald[i].rps / reference[i].rps for each pair. */
  ratios: number[];
}

/**
 * Runs Herald, reference, Herald, reference, ... so that both see the same machine conditions
 * (other processes, thermal state) in turn; a ratio is then the median of the per-pair ratios.
 * One warm-up run of each comes first, so JIT compilation is not measured.
 */
export async function alternate(
  label: string,
  rounds: number,
  warmup: RoundSize,
  size: RoundSize,
  herald: Omit<LoadSpec, 'seconds' | 'amount'>,
  reference: Omit<LoadSpec, 'seconds' | 'amount'>,
  expected: { herald: number; reference: number },
): Promise<Rounds> {
  const run = async (
    spec: Omit<LoadSpec, 'seconds' | 'amount'>,
    round: RoundSize,
    status: number,
    what: string,
  ) => {
    const result = await runLoad({ ...spec, seconds: round.seconds, amount: round.amount });
    assertStatus(result, status, what);
    return result;
  };
  progress(`${label}: warm-up`);
  await run(herald, warmup, expected.herald, `${label} warm-up (Herald)`);
  await run(reference, warmup, expected.reference, `${label} warm-up (bare)`);
  const out: Rounds = { herald: [], reference: [], ratios: [] };
  for (let i = 1; i <= rounds; i++) {
    const h = await run(herald, size, expected.herald, `${label} round ${i} (Herald)`);
    const r = await run(reference, size, expected.reference, `${label} round ${i} (bare)`);
    out.herald.push(h);
    out.reference.push(r);
    out.ratios.push(h.rps / r.rps);
    progress(
      `${label} round ${i}/${rounds}: Herald ${Math.round(h.rps)}/s p99 ${h.latency.p99} ms, ` +
        `bare ${Math.round(r.rps)}/s, ratio ${(h.rps / r.rps).toFixed(3)}`,
    );
  }
  return out;
}
