import type { FieldError } from '../errors.ts';

/** How deep `variables`, `metadata` and push `data` may nest (the contract's limit). */
export const MAX_DEPTH = 32;

/** The fields whose nesting is bounded; everything else has a fixed shape the schema checks. */
const BOUNDED = ['variables', 'metadata', 'content/data'];

/**
 * Checks what a schema cannot check cheaply, with an iterative walk (a deeply nested body must
 * not overflow the stack of the request that carries it, nor of the commit it would share): no
 * string or key anywhere may contain U+0000 (PostgreSQL text cannot hold it), and the bounded
 * fields nest at most MAX_DEPTH levels. Returns the first problem of each kind.
 */
export function payloadErrors(body: Record<string, unknown>, prefix: string): FieldError[] {
  const errors: FieldError[] = [];
  let nul = false;
  let deep = false;
  const stack: Array<{ value: unknown; path: string; depth: number; bounded: boolean }> = [
    { value: body, path: '', depth: 0, bounded: false },
  ];
  while (stack.length > 0 && !(nul && deep)) {
    const { value, path, depth, bounded } = stack.pop() as (typeof stack)[number];
    if (typeof value === 'string') {
      if (!nul && value.includes('\u0000')) {
        nul = true;
        errors.push({ path: `${prefix}${path}`, message: 'must not contain the character U+0000' });
      }
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (bounded && depth > MAX_DEPTH) {
      if (!deep) {
        deep = true;
        const field = BOUNDED.find((f) => path.startsWith(`/${f}`)) ?? path;
        errors.push({
          path: `${prefix}/${field}`,
          message: `must not nest more than ${MAX_DEPTH} levels deep`,
        });
      }
      continue;
    }
    const entries = Array.isArray(value)
      ? value.map((v, i) => [String(i), v] as const)
      : Object.entries(value);
    for (const [key, child] of entries) {
      const childPath = `${path}/${key}`;
      if (!nul && key.includes('\u0000')) {
        nul = true;
        errors.push({ path: `${prefix}${path}`, message: 'must not contain the character U+0000 in a key' });
      }
      const starts = !bounded && BOUNDED.includes(childPath.slice(1));
      stack.push({
        value: child,
        path: childPath,
        depth: starts ? 1 : depth + 1,
        bounded: bounded || starts,
      });
    }
  }
  return errors;
}
