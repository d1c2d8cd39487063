/**
 * Where each value of a JSON text starts, by its path (`steps/2/for`, the API's field-error
 * paths without `body/`), so that an error the API names by path can be shown at its line of
 * the text the user typed. JSON.parse gives values, not places; this small reader gives places.
 * It reads only as far as the text is well formed, and says where it stopped when it is not.
 */
export interface JsonLocations {
  /** The offset of each value, by path; for an object's member, the offset of its key. */
  at: Map<string, number>;
  /** Where the text stops being JSON, when it does. */
  syntaxError: number | null;
}

const SPACE = new Set([' ', '\t', '\n', '\r']);
const SCALAR = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

class Stop extends Error {}

export function locateJson(text: string): JsonLocations {
  const at = new Map<string, number>();
  let i = 0;
  const stop = (): never => {
    throw new Stop();
  };
  const space = () => {
    while (i < text.length && SPACE.has(text[i] as string)) i++;
  };
  const expect = (char: string) => {
    space();
    if (text[i] !== char) stop();
    i++;
  };
  const string = (): string => {
    const start = i;
    if (text[i] !== '"') stop();
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) stop();
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      i = start;
      return stop();
    }
  };
  const join = (path: string, part: string | number) => {
    // JSON Pointer's escapes, as the API writes a key holding `/` or `~`.
    const segment = String(part).replaceAll('~', '~0').replaceAll('/', '~1');
    return path ? `${path}/${segment}` : segment;
  };
  const value = (path: string) => {
    space();
    if (!at.has(path)) at.set(path, i);
    const char = text[i];
    if (char === '{') {
      i++;
      space();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        space();
        const keyAt = i;
        const key = string();
        const member = join(path, key);
        at.set(member, keyAt);
        expect(':');
        value(member);
        space();
        if (text[i] === ',') i++;
        else return expect('}');
      }
    }
    if (char === '[') {
      i++;
      space();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let index = 0; ; index++) {
        value(join(path, index));
        space();
        if (text[i] === ',') i++;
        else return expect(']');
      }
    }
    if (char === '"') return void string();
    SCALAR.lastIndex = i;
    if (!SCALAR.test(text)) stop();
    i = SCALAR.lastIndex;
  };
  try {
    value('');
    space();
    if (i < text.length) stop();
    return { at, syntaxError: null };
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    return { at, syntaxError: Math.min(i, text.length) };
  }
}

/** The 1-based line of `offset` in `text`. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text[i] === '\n') line++;
  return line;
}

/**
 * The line an error's path points at: the value itself, or else its nearest enclosing value
 * that the text has (a missing `for` points at its step). `null` for an empty text.
 */
export function lineOfPath(text: string, locations: JsonLocations, path: string): number | null {
  const parts = path.split('/').filter(Boolean);
  for (let n = parts.length; n >= 0; n--) {
    const offset = locations.at.get(parts.slice(0, n).join('/'));
    if (offset !== undefined) return lineAt(text, offset);
  }
  return null;
}
