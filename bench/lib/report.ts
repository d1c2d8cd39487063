import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { round } from './stats.ts';

/** One line of the results: a measured figure, or why it could not be measured. */
export interface Row {
  scenario: string;
  metric: string;
  value: number | null;
  unit: string;
  /** The issue's target in words, e.g. ">= 0.5". */
  target?: string;
  /** The target's bound in the row's own unit (a target of "<= 1 s" on a row in ms: 1000). */
  bound?: number;
  /** Whether the target was met; null without a target or without a value. */
  met: boolean | null;
  /** 'unavailable': the part it needs has not landed; 'error': the harness or Herald failed. */
  status: 'ok' | 'unavailable' | 'error';
  note?: string;
}

/** A target check: the value and the bound, and whether higher or lower is better. */
export function against(value: number, bound: number, better: 'higher' | 'lower'): boolean {
  return better === 'higher' ? value >= bound : value <= bound;
}

/** A measured row; `target` with `bound` and `better` sets `met`. */
export function measured(
  scenario: string,
  metric: string,
  value: number,
  unit: string,
  extra: { target?: { bound: number; better: 'higher' | 'lower'; text: string }; note?: string } = {},
): Row {
  const finite = Number.isFinite(value);
  return {
    scenario,
    metric,
    value: finite ? round(value) : null,
    unit,
    target: extra.target?.text,
    bound: extra.target?.bound,
    met: extra.target && finite ? against(value, extra.target.bound, extra.target.better) : null,
    status: finite ? 'ok' : 'error',
    note: extra.note ?? (finite ? undefined : 'no value measured'),
  };
}

/** The machine the figures come from, recorded next to them; `loadAtStart` shows how quiet it was. */
export function machine(loadAtStart: number) {
  const list = cpus();
  return {
    loadAverage: { atStart: round(loadAtStart, 2), atEnd: round(loadavg()[0] ?? 0, 2) },
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryMb: Math.round(totalmem() / 2 ** 20),
    freeMemoryMb: Math.round(freemem() / 2 ** 20),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}

function formatValue(row: Row): string {
  if (row.value === null) return row.status === 'unavailable' ? 'n/a' : 'error';
  const text =
    Math.abs(row.value) >= 1000 ? Math.round(row.value).toLocaleString('en-US') : String(row.value);
  return `${text} ${row.unit}`.trim();
}

function verdict(row: Row): string {
  if (row.status === 'unavailable') return 'not available yet';
  if (row.status === 'error') return 'ERROR';
  if (row.met === null) return '';
  return row.met ? 'met' : 'MISSED';
}

/** The results as a fixed-width text table (also pasted into the README). */
export function table(rows: readonly Row[]): string {
  const header = ['scenario', 'metric', 'value', 'target', 'result'];
  const lines = rows.map((row) => [
    row.scenario,
    row.metric,
    formatValue(row),
    row.target ?? '',
    verdict(row),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((line) => (line[i] as string).length)));
  const format = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  return [format(header), rule, ...lines.map(format)].join('\n');
}

/** Notes under the table: why a row is unavailable or failed, by how much a target was missed. */
export function notes(rows: readonly Row[]): string[] {
  const out: string[] = [];
  for (const row of rows) {
    const label = `${row.scenario} / ${row.metric}`;
    if (row.met === false && row.value !== null && row.target) {
      const bound = row.bound;
      const by =
        bound !== undefined && bound > 0
          ? ` (${round((Math.abs(row.value - bound) / bound) * 100, 2)}% off)`
          : '';
      out.push(`${label}: missed target ${row.target}${by}${row.note ? `; ${row.note}` : ''}`);
    } else if (row.note) {
      out.push(`${label}: ${row.note}`);
    }
  }
  return out;
}

/** The closing one-line summary. */
export function summary(rows: readonly Row[], seconds: number): string {
  const targets = rows.filter((r) => r.met !== null);
  const met = targets.filter((r) => r.met).length;
  const unavailable = new Set(rows.filter((r) => r.status === 'unavailable').map((r) => r.scenario));
  const errors = rows.filter((r) => r.status === 'error').length;
  const parts = [`${met}/${targets.length} targets met`];
  if (unavailable.size) parts.push(`not available yet: ${[...unavailable].join(', ')}`);
  if (errors) parts.push(`${errors} error${errors === 1 ? '' : 's'}`);
  return `bench: ${parts.join('; ')} (${Math.round(seconds)} s)`;
}
