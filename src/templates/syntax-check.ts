import { type FieldError, HeraldError } from '../errors.ts';
import type { Rank } from '../reserve.ts';
import type { LiquidSource } from './fields.ts';
import type { Renderer } from './render.ts';

/**
 * One content to check (inline content, or a template's fields: `liquidSources(content)`), its
 * errors under `prefix`.
 */
export interface SyntaxItem {
  /** Its fields that hold Liquid markup. */
  sources: LiquidSource[];
  /** Where its fields' errors point, e.g. `body/content` or `body/notifications/3/content`. */
  prefix: string;
  /** The priority its parse runs at in the render pool (0 CRITICAL .. 3 LOW). */
  rank: Rank;
}

/** The Liquid syntax errors of each item, in order (an empty list: every field parses). */
export type SyntaxCheck = (tenant: string, items: SyntaxItem[]) => Promise<FieldError[][]>;

/** Verdicts kept, by the digest of each source. */
const MAX_VERDICTS = 2000;

/**
 * The Liquid syntax check of inline content at acceptance and of templates at save. Parsing is
 * rendering's cousin (about a millisecond of CPU per KB of markup: a batch of 1,000 distinct
 * 7.8 KB sources is seconds of it), so it runs where rendering does, in the render pool's
 * threads: within the render deadline, in turns with other tenants at the item's priority, and
 * never on the event loop that answers requests. Bulk sends repeat the same content with
 * different variables: each source's verdict is remembered by its digest, so a batch that repeats
 * one is checked once, and a known source costs no hand-over at all.
 */
export function createSyntaxCheck(renderer: Pick<Renderer, 'checkSyntax'>): SyntaxCheck {
  const verdicts = new Map<string, string | null>();
  return async (tenant, items) => {
    // This request's verdicts: those known, and the sources without one, each parsed once, at
    // the most urgent priority asking.
    const found = new Map<string, string | null>();
    const unknown = new Map<string, LiquidSource & { rank: Rank }>();
    const transient = new Set<string>();
    for (const { sources, rank } of items) {
      for (const s of sources) {
        const known = verdicts.get(s.digest);
        if (known !== undefined) found.set(s.digest, known);
        else if ((unknown.get(s.digest)?.rank ?? Number.POSITIVE_INFINITY) > rank)
          unknown.set(s.digest, { ...s, rank });
      }
    }
    const byRank = new Map<Rank, Array<LiquidSource & { rank: Rank }>>();
    for (const s of unknown.values()) {
      const group = byRank.get(s.rank);
      if (group) group.push(s);
      else byRank.set(s.rank, [s]);
    }
    await Promise.all(
      [...byRank].map(async ([rank, sources]) => {
        const checked = await renderer.checkSyntax(
          tenant,
          rank,
          sources.map(({ field, source, digest }) => ({ field, source, digest })),
        );
        for (const [i, s] of sources.entries()) {
          const verdict = checked[i] ?? null;
          if (verdict !== null && 'unavailable' in verdict) {
            // Nothing is known of the source: the request fails whole, and nothing is remembered.
            throw new HeraldError('UNAVAILABLE', `Liquid cannot be checked now (${verdict.unavailable}).`, {
              retryAfterS: 1,
            });
          }
          found.set(s.digest, verdict?.error ?? null);
          // Only what the source itself decides is remembered (shared by every tenant): never a
          // parse cut short, which the machine's load may have caused.
          if (verdict !== null && !verdict.lasting) transient.add(s.digest);
        }
      }),
    );
    for (const digest of unknown.keys()) {
      if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
      if (!transient.has(digest)) verdicts.set(digest, found.get(digest) ?? null);
    }
    return items.map(({ sources, prefix }) =>
      sources.flatMap(({ field, digest }) => {
        const problem = found.get(digest);
        return problem ? [{ path: `${prefix}/${field}`, message: `must be valid Liquid: ${problem}` }] : [];
      }),
    );
  };
}
