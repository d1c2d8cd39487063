import type { FieldError } from '../errors.ts';
import { MAX_FIELD_ERRORS, NUL_MESSAGE, tooDeep } from '../http/field-messages.ts';

/** How deep `variables`, `metadata` and push `data` may nest (the contract's limit). */
export const MAX_DEPTH = 32;

/** The bounded fields, by the container that holds them (`sampleVariables`, `data`: a template's, routes.ts). */
const BOUNDED_TOP = new Set(['variables', 'metadata', 'sampleVariables', 'data']);

/**
 * Checks what a schema cannot check cheaply, with an iterative walk (a deeply nested body must
 * not overflow the stack of the request that carries it, nor of the commit it would share): no
 * string or key anywhere may contain U+0000 (PostgreSQL text cannot hold it), and `variables`,
 * `metadata` and `content.data` nest at most MAX_DEPTH levels. Returns every problem found, one
 * per field and rule (MAX_FIELD_ERRORS at most); a field nested too deep is not walked deeper.
 * It runs for every item of a batch, so it allocates only per container, not per value.
 */
export function payloadErrors(body: Record<string, unknown>, prefix: string): FieldError[] {
  const errors: FieldError[] = [];
  const found = (field: string, message: string) => {
    const path = field ? `${prefix}/${field}` : prefix;
    if (!errors.some((e) => e.path === path && e.message === message)) errors.push({ path, message });
  };
  // Parallel stacks: the container, its nesting level inside a bounded field (0: not in one), and
  // the bounded field's name (for the error's path).
  const values: object[] = [body];
  const depths: number[] = [0];
  const fields: string[] = [''];
  while (values.length > 0 && errors.length < MAX_FIELD_ERRORS) {
    const value = values.pop() as object;
    const depth = depths.pop() as number;
    const field = fields.pop() as string;
    if (depth > MAX_DEPTH) {
      found(field, tooDeep(MAX_DEPTH));
      continue;
    }
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const child: unknown = value[i];
        if (typeof child === 'string') {
          if (child.includes('\u0000')) found(field, NUL_MESSAGE);
        } else if (typeof child === 'object' && child !== null) {
          values.push(child);
          depths.push(depth === 0 ? 0 : depth + 1);
          fields.push(field);
        }
      }
      continue;
    }
    const record = value as Record<string, unknown>;
    for (const key in record) {
      if (key.includes('\u0000')) found(field, NUL_MESSAGE);
      const child = record[key];
      if (typeof child === 'string') {
        if (child.includes('\u0000')) found(field || key, NUL_MESSAGE);
      } else if (typeof child === 'object' && child !== null) {
        // Entering a bounded field starts its count at 1; inside one, each level adds one.
        const starts =
          depth === 0 && (value === body ? BOUNDED_TOP.has(key) : key === 'data' && record === body.content);
        values.push(child);
        depths.push(starts ? 1 : depth === 0 ? 0 : depth + 1);
        fields.push(starts ? (value === body ? key : 'content/data') : field || key);
      }
    }
  }
  return errors;
}
