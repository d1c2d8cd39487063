import type { FieldError } from '../errors.ts';
import type { RecipientStore } from '../store/port/recipients.ts';
import { csvRecords } from './csv.ts';
import { boundedLines } from './lines.ts';
import type { Preferences } from './model.ts';
import { RECIPIENTS_PER_BATCH } from './model.ts';
import { preferencesOfRow } from './preferences-line.ts';
import { checkEntry, isPlainObject, type RecipientEntry } from './profile.ts';

/**
 * `herald recipients import` (docs/recipients.md): recipients from a CSV file with a header row
 * or from JSON lines, each row checked as an item of POST /recipients/batch is (profile.ts) and
 * the valid ones written through the store 1000 at a time, one transaction each. The file is
 * streamed: at most one batch and one row are held. A refused row writes nothing and does not
 * stop the others; its line number and reason are reported.
 */

/** The longest row taken, in characters: a profile at its limits (10 push targets, 8 KiB of data) is far shorter. */
export const MAX_ROW_CHARS = 256 * 1024;

/** How many refused rows the summary lists (every one is counted). */
export const REFUSALS_LISTED = 1000;

/**
 * CSV columns an import takes: `push`, `data` and `preferences` hold JSON text. `preferences`
 * (as an export writes them) replace the recipient's; a row without them keeps its.
 */
export const CSV_COLUMNS = [
  'recipientId',
  'email',
  'phone',
  'locale',
  'timezone',
  'name',
  'push',
  'data',
  'preferences',
];
const JSON_COLUMNS = new Set(['push', 'data', 'preferences']);

export type ImportFormat = 'csv' | 'jsonl';

/** A mistake that stops the whole import before any row is written (a CSV header with an unknown column). */
export class ImportError extends Error {}

export interface ImportSummary {
  imported: number;
  refused: number;
  /** The first REFUSALS_LISTED refused rows, in file order. */
  refusals: Array<{ line: number; reason: string }>;
}

export interface ImportOptions {
  recipients: Pick<RecipientStore, 'write'>;
  tenant: string;
  /** The file's text, in chunks. */
  text: AsyncIterable<string>;
  format: ImportFormat;
  pushAllowedHosts: readonly string[];
  now: () => number;
  /** Told after each batch is written. */
  progress?: (counts: { imported: number; refused: number }) => void;
}

/** A row as read: the value to check, or why it cannot be one. */
type Row = { line: number; value: unknown } | { line: number; reason: string };

/** The format a file name says (`.csv`, `.jsonl`, `.ndjson`, `.json`), or undefined. */
export function formatOfName(name: string): ImportFormat | undefined {
  if (/\.csv$/i.test(name)) return 'csv';
  if (/\.(jsonl|ndjson|json)$/i.test(name)) return 'jsonl';
  return undefined;
}

/** The format the text says: JSON lines when its first character (after spaces) is `{`. */
export function formatOfText(start: string): ImportFormat {
  return start
    .replace(/^\uFEFF/, '')
    .trimStart()
    .startsWith('{')
    ? 'jsonl'
    : 'csv';
}

/** A row's field errors as one line: `email must be an email address…; phone must be…`. */
function reasonOf(errors: FieldError[]): string {
  return errors.map((e) => (e.path ? `${e.path.slice(1)} ${e.message}` : `the row ${e.message}`)).join('; ');
}

async function* jsonRows(text: AsyncIterable<string>): AsyncGenerator<Row> {
  for await (const line of boundedLines(text, MAX_ROW_CHARS)) {
    if ('problem' in line) yield { line: line.line, reason: line.problem };
    else if (line.text.trim() !== '') {
      try {
        yield { line: line.line, value: JSON.parse(line.text) };
      } catch {
        yield { line: line.line, reason: 'the row is not JSON' };
      }
    }
  }
}

/** The header's columns; an unknown, repeated or missing one stops the import. */
function columnsOf(fields: string[]): string[] {
  const columns = fields.map((f) => f.trim());
  const unknown = columns.filter((c) => !CSV_COLUMNS.includes(c));
  if (unknown.length > 0) {
    throw new ImportError(
      `unknown CSV column ${unknown.join(', ')}: the columns are ${CSV_COLUMNS.join(', ')}`,
    );
  }
  const repeated = columns.find((c, i) => columns.indexOf(c) !== i);
  if (repeated) throw new ImportError(`the CSV column ${repeated} is given twice`);
  if (!columns.includes('recipientId')) throw new ImportError('the CSV header has no recipientId column');
  return columns;
}

async function* csvRows(text: AsyncIterable<string>): AsyncGenerator<Row> {
  let columns: string[] | undefined;
  for await (const record of csvRecords(text, MAX_ROW_CHARS)) {
    if ('problem' in record) {
      if (!columns) throw new ImportError(`the CSV header (line ${record.line}): ${record.problem}`);
      yield { line: record.line, reason: record.problem };
      continue;
    }
    const { fields, line } = record;
    if (fields.length === 1 && fields[0] === '') continue; // a blank line
    if (!columns) {
      columns = columnsOf(fields);
      continue;
    }
    if (fields.length !== columns.length) {
      yield { line, reason: `the row has ${fields.length} fields where the header has ${columns.length}` };
      continue;
    }
    // An empty cell is an absent field; `push` and `data` are JSON text.
    const value: Record<string, unknown> = {};
    let reason: string | undefined;
    columns.forEach((column, i) => {
      const cell = fields[i] as string;
      if (cell === '' || reason) return;
      if (!JSON_COLUMNS.has(column)) {
        value[column] = cell;
        return;
      }
      try {
        value[column] = JSON.parse(cell);
      } catch {
        reason = `${column} must be JSON text`;
      }
    });
    yield reason ? { line, reason } : { line, value };
  }
}

/** Imports the rows of `text`; resolves with the summary once every valid row is written. */
export async function importRecipients(options: ImportOptions): Promise<ImportSummary> {
  const { recipients, tenant, pushAllowedHosts } = options;
  const summary: ImportSummary = { imported: 0, refused: 0, refusals: [] };
  const refuse = (line: number, reason: string) => {
    summary.refused++;
    if (summary.refusals.length < REFUSALS_LISTED) summary.refusals.push({ line, reason });
  };
  let batch: Array<RecipientEntry & { preferences?: Preferences }> = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await recipients.write(tenant, batch, options.now());
    summary.imported += batch.length;
    batch = [];
    options.progress?.({ imported: summary.imported, refused: summary.refused });
  };
  const rows = options.format === 'csv' ? csvRows(options.text) : jsonRows(options.text);
  for await (const row of rows) {
    if ('reason' in row) {
      refuse(row.line, row.reason);
      continue;
    }
    if (!isPlainObject(row.value)) {
      refuse(row.line, reasonOf([{ path: '', message: 'must be a JSON object' }]));
      continue;
    }
    // The profile is checked as a batch item's; the preferences beside it are the import's own.
    const { preferences: given, ...profile } = row.value;
    const preferences = given === undefined ? undefined : preferencesOfRow(given);
    const entry = checkEntry(profile, '', pushAllowedHosts);
    if (Array.isArray(entry)) refuse(row.line, reasonOf(entry));
    else if (typeof preferences === 'string') refuse(row.line, preferences);
    else {
      batch.push(preferences === undefined ? entry : { ...entry, preferences });
      if (batch.length === RECIPIENTS_PER_BATCH) await flush();
    }
  }
  await flush();
  return summary;
}
