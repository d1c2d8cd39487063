import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { DEFAULT_TENANT, TENANT_NAME } from '../auth/principal.ts';
import { exportRecipients } from '../recipients/export.ts';
import {
  CSV_COLUMNS,
  formatOfName,
  formatOfText,
  ImportError,
  type ImportFormat,
  type ImportSummary,
  importRecipients,
} from '../recipients/import.ts';
import { parseOptions, runCli, UsageError } from './support.ts';

export const RECIPIENTS_HELP = `Usage:
  herald recipients import FILE [--tenant T] [--format csv|jsonl]
  herald recipients export [--tenant T]       (JSON lines on standard output)

FILE is CSV with a header row (columns ${CSV_COLUMNS.join(', ')}; push and data as
JSON text) or JSON lines (one {"recipientId": …, "email": …} a line), told by its name (.csv,
.jsonl, .ndjson) or else by its first character; - reads standard input. Each row replaces its
recipient's profile, checked as an item of POST /recipients/batch is; a refused row writes
nothing and the others go on. The summary lists refused rows by line number; the exit code is 1
when a row was refused. The export prints every profile in the form the import reads.

Examples:
  herald recipients import users.csv --tenant acme
  herald recipients export --tenant acme > recipients.jsonl`;

const OPTIONS = {
  tenant: { type: 'string' },
  format: { type: 'string' },
} as const;

/** How often the progress line is redrawn, ms. */
const PROGRESS_EVERY_MS = 100;

const number = (n: number) => n.toLocaleString('en-US');

/** Writes to standard output, resolving once it took the text (so a slow reader slows the export). */
const writeOut = (text: string) =>
  new Promise<void>((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
  });

/** The text of FILE (or standard input) in chunks, and the format it is in. */
async function openText(file: string, given: string | undefined) {
  if (given !== undefined && given !== 'csv' && given !== 'jsonl')
    throw new UsageError('--format must be csv or jsonl');
  const stream: Readable =
    file === '-' ? process.stdin.setEncoding('utf8') : createReadStream(file, { encoding: 'utf8' });
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<string>;
  const head = await chunks.next();
  const format: ImportFormat =
    (given as ImportFormat | undefined) ?? formatOfName(file) ?? formatOfText(head.done ? '' : head.value);
  async function* text() {
    if (head.done) return;
    yield head.value;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
  }
  return { stream, format, text: text() };
}

/** A progress bar on a terminal (standard error), redrawn at most every PROGRESS_EVERY_MS. */
function progressLine(stream: Readable, size: number | undefined) {
  if (!process.stderr.isTTY) return { update: () => {}, done: () => {} };
  let drawn = 0;
  let shown = false;
  return {
    update({ imported, refused }: { imported: number; refused: number }) {
      const now = Date.now();
      if (now - drawn < PROGRESS_EVERY_MS) return;
      drawn = now;
      shown = true;
      const counts = `${number(imported)} imported, ${number(refused)} refused`;
      const read = (stream as Readable & { bytesRead?: number }).bytesRead;
      if (!size || read === undefined) {
        process.stderr.write(`\r${counts}`);
        return;
      }
      const share = Math.min(1, read / size);
      const bar = '#'.repeat(Math.round(share * 30)).padEnd(30, '-');
      process.stderr.write(`\r[${bar}] ${String(Math.round(share * 100)).padStart(3)}%  ${counts}`);
    },
    done() {
      if (shown) process.stderr.write('\n');
    },
  };
}

function printSummary(summary: ImportSummary, tenant: string, out: (line: string) => void) {
  const rows = summary.refused === 1 ? 'row' : 'rows';
  out(
    `Imported ${number(summary.imported)} recipients into tenant ${tenant}; refused ${number(summary.refused)} ${rows}${summary.refused > 0 ? ':' : '.'}`,
  );
  for (const { line, reason } of summary.refusals) out(`  line ${line}: ${reason}`);
  const unlisted = summary.refused - summary.refusals.length;
  if (unlisted > 0) out(`  … and ${number(unlisted)} more refused rows`);
}

/** `herald recipients import|export` (docs/recipients.md), against the configured store. */
export function runRecipients(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return runCli(env, RECIPIENTS_HELP, async ({ config, store, clock, out }) => {
    const [action, ...rest] = args;
    const { values, positionals } = parseOptions(rest, OPTIONS, action === 'import');
    const tenant = values.tenant ?? DEFAULT_TENANT;
    if (!TENANT_NAME.test(tenant)) throw new UsageError('--tenant must be lowercase letters, digits, . _ -');
    if (action === 'export') {
      if (values.format !== undefined) throw new UsageError('the export is JSON lines: no --format');
      const count = await exportRecipients(store.recipients, tenant, writeOut);
      console.error(`Exported ${number(count)} recipients of tenant ${tenant}.`);
      return 0;
    }
    if (action !== 'import') throw new UsageError(action ? `unknown action "${action}"` : 'missing action');
    const [file, extra] = positionals;
    if (file === undefined || extra !== undefined)
      throw new UsageError('give one FILE (- for standard input)');
    let size: number | undefined;
    if (file !== '-') {
      try {
        size = statSync(file).size;
      } catch {
        console.error(`No file ${file}.`);
        return 1;
      }
    }
    const { stream, format, text } = await openText(file, values.format);
    const progress = progressLine(stream, size);
    try {
      const summary = await importRecipients({
        recipients: store.recipients,
        tenant,
        text,
        format,
        pushAllowedHosts: config.providers.pushAllowedHosts ?? [],
        now: () => clock.now(),
        progress: progress.update,
      });
      progress.done();
      printSummary(summary, tenant, out);
      return summary.refused > 0 ? 1 : 0;
    } catch (error) {
      progress.done();
      if (!(error instanceof ImportError)) throw error;
      console.error(`Nothing imported: ${error.message}.`);
      return 1;
    } finally {
      stream.destroy();
    }
  });
}
