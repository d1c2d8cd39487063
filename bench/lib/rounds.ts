import { acceptOrShed, type LoadResult, type LoadSpec, runLoad } from './load.ts';
import { progress } from './log.ts';
import type { RoundSize } from './options.ts';

/** The results of alternating rounds: Herald's and the reference's, pair by pair. */
export interface Rounds {
  herald: LoadResult[];
  reference: LoadResult[];
  /** herald[i].rps / reference[i].rps for each pair (accepted requests only). */
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
  /** What the progress lines call the reference. */
  referenceName = 'bare',
): Promise<Rounds> {
  const run = async (
    spec: Omit<LoadSpec, 'seconds' | 'amount'>,
    round: RoundSize,
    status: number,
    what: string,
  ) => {
    return acceptOrShed(
      await runLoad({ ...spec, seconds: round.seconds, amount: round.amount }),
      status,
      what,
    );
  };
  progress(`${label}: warm-up`);
  await run(herald, warmup, expected.herald, `${label} warm-up (Herald)`);
  await run(reference, warmup, expected.reference, `${label} warm-up (${referenceName})`);
  const out: Rounds = { herald: [], reference: [], ratios: [] };
  for (let i = 1; i <= rounds; i++) {
    const h = await run(herald, size, expected.herald, `${label} round ${i} (Herald)`);
    const r = await run(reference, size, expected.reference, `${label} round ${i} (${referenceName})`);
    out.herald.push(h);
    out.reference.push(r);
    out.ratios.push(h.rps / r.rps);
    progress(
      `${label} round ${i}/${rounds}: Herald ${Math.round(h.rps)}/s p99 ${h.latency.p99} ms, ` +
        `${referenceName} ${Math.round(r.rps)}/s, ratio ${(h.rps / r.rps).toFixed(3)}`,
    );
  }
  return out;
}

/** A note part when Herald shed load (429/503) in some rounds; empty when it did not. */
export function shedNote(rounds: Rounds): string {
  const shed = rounds.herald.reduce((n, r) => n + (r.shed ?? 0), 0);
  const total = rounds.herald.reduce((n, r) => n + r.requests, 0);
  return shed ? `; ${shed} of ${total} requests refused with 429/503 (overload) and not counted` : '';
}
