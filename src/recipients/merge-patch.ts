import { isPlainObject } from './profile.ts';

/**
 * RFC 7396 JSON merge patch: an object patch merges into an object target key by key, `null`
 * removes a key, anything else (a list, a string) replaces the value whole. The result is a new
 * value; neither input changes. Recursive: callers bound the patch's depth first (routes.ts).
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const base = isPlainObject(target) ? target : {};
  const entries = new Map(Object.entries(base));
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) entries.delete(key);
    else entries.set(key, mergePatch(entries.get(key), value));
  }
  // fromEntries defines each key, so a `__proto__` key stays a plain key, never a prototype.
  return Object.fromEntries(entries);
}
