// The import's readers: RFC 4180 CSV and bounded JSON lines, whatever the chunk boundaries.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CsvRecord, csvRecords } from '../../src/recipients/csv.ts';
import { boundedLines, type Line } from '../../src/recipients/lines.ts';

async function* chunked(text: string, size: number) {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

async function all<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

/** The records of `text` read in chunks of every size from 1 to 7 and whole: all the same. */
async function records(text: string, max = 1000): Promise<CsvRecord[]> {
  const whole = await all(csvRecords(chunked(text, text.length || 1), max));
  for (const size of [1, 2, 3, 5, 7]) {
    assert.deepEqual(await all(csvRecords(chunked(text, size), max)), whole, `chunks of ${size}`);
  }
  return whole;
}

describe('the CSV reader', () => {
  it('reads quoted fields with commas, line breaks and doubled quotes', async () => {
    const text = '\uFEFFid,name,note\r\n1,"Lovelace, Ada","said ""hi""\nthen left"\r\n2,,\n"3",x,"" \n';
    assert.deepEqual(await records(text.replace('"" \n', '""\n')), [
      { line: 1, fields: ['id', 'name', 'note'] },
      { line: 2, fields: ['1', 'Lovelace, Ada', 'said "hi"\nthen left'] },
      { line: 4, fields: ['2', '', ''] },
      { line: 5, fields: ['3', 'x', ''] },
    ]);
  });

  it('ends records at LF, CRLF or CR, with or without a last line break', async () => {
    assert.deepEqual(await records('a,b\rc,d\r\ne,f'), [
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['c', 'd'] },
      { line: 3, fields: ['e', 'f'] },
    ]);
    assert.deepEqual(await records(''), []);
    assert.deepEqual(await records('\n'), [{ line: 1, fields: [''] }]);
  });

  it('refuses a malformed record alone, at its first line, and reads on', async () => {
    const text = 'a,b\nx"y,z\n"open,1\n2,3\n"a"b,c\nok,1\n"never closed\n';
    const found = await records(text);
    assert.deepEqual(
      found.map((r) => ('problem' in r ? `${r.line}: problem` : `${r.line}: ${r.fields.join('|')}`)),
      ['1: a|b', '2: problem', '3: problem', '6: ok|1', '7: problem'],
    );
  });

  it('skips a record longer than the limit to its end without keeping it', async () => {
    const long = 'x'.repeat(5000);
    const text = `a,b\n1,${long}\n"${long}\n${long}",2\n3,4\n`;
    const found = await records(text, 100);
    assert.deepEqual(
      found.map((r) => ('problem' in r ? `${r.line}: ${r.problem}` : `${r.line}: ${r.fields.join('|')}`)),
      [
        '1: a|b',
        '2: the row is longer than 100 characters',
        '3: the row is longer than 100 characters',
        '5: 3|4',
      ],
    );
  });
});

describe('the JSON lines reader', () => {
  it('reads LF and CRLF lines and refuses a line past the limit alone', async () => {
    const text = `{"a":1}\r\n${'y'.repeat(300)}\n\n{"b":2}`;
    for (const size of [1, 4, 64, text.length]) {
      const lines: Line[] = await all(boundedLines(chunked(text, size), 100));
      assert.deepEqual(lines, [
        { line: 1, text: '{"a":1}' },
        { line: 2, problem: 'the row is longer than 100 characters' },
        { line: 3, text: '' },
        { line: 4, text: '{"b":2}' },
      ]);
    }
  });
});
