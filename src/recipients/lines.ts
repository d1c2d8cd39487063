/**
 * Lines of text from chunks (LF or CRLF), each at most `maxChars` long: a longer line is not
 * kept but skipped to its end and reported on its own, so a file of any size, or a line of any
 * length, is read in constant memory. Lines count from 1; a byte-order mark is dropped.
 */
export type Line = { line: number; text: string } | { line: number; problem: string };

/** Why a row past the limit is refused (here and in csv.ts). */
export const rowTooLong = (maxChars: number) =>
  `the row is longer than ${maxChars.toLocaleString('en-US')} characters`;

export async function* boundedLines(chunks: AsyncIterable<string>, maxChars: number): AsyncGenerator<Line> {
  let pending = '';
  let tooLong = false;
  let line = 1;
  let first = true;
  const end = (): Line => {
    const text = pending.endsWith('\r') ? pending.slice(0, -1) : pending;
    const result: Line =
      tooLong || text.length > maxChars ? { line, problem: rowTooLong(maxChars) } : { line, text };
    pending = '';
    tooLong = false;
    line++;
    return result;
  };
  for await (let chunk of chunks) {
    if (first) {
      first = false;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    let start = 0;
    for (let at = chunk.indexOf('\n'); at !== -1; at = chunk.indexOf('\n', start)) {
      if (!tooLong) pending += chunk.slice(start, at);
      yield end();
      start = at + 1;
    }
    if (!tooLong) {
      pending += chunk.slice(start);
      // Past the limit (and a CR the line may end with), the rest of the line is not kept.
      if (pending.length > maxChars + 1) {
        tooLong = true;
        pending = '';
      }
    }
  }
  if (pending !== '' || tooLong) yield end();
}
