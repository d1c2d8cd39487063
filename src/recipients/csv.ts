/**
 * A streaming CSV reader (RFC 4180): comma-separated fields, a field in double quotes may hold
 * commas, line breaks and doubled quotes (`""`), records end at CRLF, LF or CR. Text arrives in
 * chunks and leaves record by record, so a file of any size is read in constant memory; a
 * record longer than `maxChars` is not kept but skipped to its end and reported on its own.
 * No CSV parser was among the project's dependencies, and this is all an import needs.
 */

import { rowTooLong } from './lines.ts';

/** A record, or why the record starting at `line` was refused. Lines count from 1. */
export type CsvRecord = { line: number; fields: string[] } | { line: number; problem: string };

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;

// Where the reader is.
/** At the start of a field. */
const START = 0;
/** In a field without quotes. */
const BARE = 1;
/** In a quoted field. */
const QUOTED = 2;
/** Just after a quote inside a quoted field: a second quote, or the field's end. */
const QUOTE_SEEN = 3;

/** Reads records from text chunks; the first record is the header, for the caller to read. */
export async function* csvRecords(
  chunks: AsyncIterable<string>,
  maxChars: number,
): AsyncGenerator<CsvRecord> {
  let state: number = START;
  let fields: string[] = [];
  let field = '';
  let size = 0;
  let line = 1;
  let recordLine = 1;
  /** Why the current record is refused (it is still read to its end). */
  let problem: string | undefined;
  /** The record has begun (a character of it was read). */
  let begun = false;
  /** The previous chunk ended with a CR that ended a record: a leading LF belongs to it. */
  let afterCr = false;
  let first = true;

  const endRecord = (): CsvRecord => {
    const record: CsvRecord = problem
      ? { line: recordLine, problem }
      : { line: recordLine, fields: [...fields, field] };
    fields = [];
    field = '';
    size = 0;
    problem = undefined;
    begun = false;
    state = START;
    return record;
  };
  const add = (text: string) => {
    if (problem) return;
    size += text.length;
    if (size > maxChars) {
      problem = rowTooLong(maxChars);
      fields = [];
      field = '';
    } else field += text;
  };

  for await (let chunk of chunks) {
    if (first) {
      first = false;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    let i = 0;
    if (afterCr && chunk.charCodeAt(0) === LF) i = 1;
    afterCr = false;
    for (; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (!begun) {
        begun = true;
        recordLine = line;
      }
      if (state === QUOTED) {
        // Copy the run up to the next quote at once, counting the line breaks it holds.
        const end = chunk.indexOf('"', i);
        const run = chunk.slice(i, end === -1 ? chunk.length : end);
        for (let at = run.indexOf('\n'); at !== -1; at = run.indexOf('\n', at + 1)) line++;
        add(run);
        if (end === -1) break;
        i = end;
        state = QUOTE_SEEN;
        continue;
      }
      if (c === QUOTE) {
        if (state === START) state = QUOTED;
        else if (state === QUOTE_SEEN) {
          add('"');
          state = QUOTED;
        } else {
          problem ??= 'a field holds a quote but does not start with one (quote the whole field)';
        }
        continue;
      }
      if (c === COMMA) {
        if (!problem) {
          fields.push(field);
          size += 1;
        }
        field = '';
        state = START;
        continue;
      }
      if (c === LF || c === CR) {
        line++;
        if (c === CR) {
          if (i + 1 === chunk.length) afterCr = true;
          else if (chunk.charCodeAt(i + 1) === LF) i++;
        }
        yield endRecord();
        continue;
      }
      if (state === QUOTE_SEEN) {
        problem ??= 'a quoted field goes on after its closing quote (write a quote inside one as "")';
        state = BARE;
      }
      // A run of plain characters at once.
      let end = i + 1;
      while (end < chunk.length) {
        const d = chunk.charCodeAt(end);
        if (d === QUOTE || d === COMMA || d === LF || d === CR) break;
        end++;
      }
      add(chunk.slice(i, end));
      if (state === START) state = BARE;
      i = end - 1;
    }
  }
  if (state === QUOTED) {
    problem ??= 'a quoted field is never closed';
    yield endRecord();
  } else if (begun) yield endRecord();
}
