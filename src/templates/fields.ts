/**
 * The Liquid source fields a template or inline content may carry, apart from Liquid itself
 * (liquid.ts): the dispatch thread reads these but renders nothing, so it never loads liquidjs.
 */
export const TEXT_FIELDS = ['subject', 'text', 'html', 'title', 'body'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];

/** One field's Liquid source, as the syntax check sends it to a render thread. */
export interface LiquidSource {
  field: TextField;
  source: string;
}

/** Whether a source has Liquid markup at all (most inline content has none). */
export function hasLiquid(source: string): boolean {
  return /{[{%]/.test(source);
}
