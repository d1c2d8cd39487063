/** The path with its percent-encoding undone, as many times as it nests; the raw path if it is not valid. */
function safeDecode(path: string): string {
  let current = path;
  for (let i = 0; i < 3; i++) {
    try {
      const next = decodeURIComponent(current);
      if (next === current) break;
      current = next;
    } catch {
      break;
    }
  }
  return current;
}

/**
 * Whether a request path climbs (`..` as a segment, percent-encoded or not, however nested) or
 * uses backslashes: such a path names no page of the UI and nothing upstream, and gets 404.
 */
export function climbs(path: string): boolean {
  return /(^|\/|\\)\.\.($|\/|\\)|\\/.test(safeDecode(path));
}
