import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './proc.ts';
import { type machine, type Row, table } from './report.ts';

const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';

/** Where the bench table lives: the README links to it rather than carry a quarter of its length. */
export const PERFORMANCE_DOC = join(ROOT, 'docs', 'performance.md');

/** What run.ts writes to bench/results/latest.json (the parts docs/performance.md shows). */
export interface Results {
  startedAt: string;
  seconds: number;
  machine: ReturnType<typeof machine>;
  rows: Row[];
  notes: string[];
  summary: string;
}

/** The generated part of docs/performance.md: machine, table, notes, summary. */
export function benchBlock(results: Results): string {
  const m = results.machine;
  return [
    START,
    `Measured ${results.startedAt.slice(0, 16).replace('T', ' ')} UTC on ${m.cpu}, ${m.cores} cores, ` +
      `${Math.round(m.memoryMb / 1024)} GB RAM, Node ${m.node}, ${m.platform}; the run took ` +
      `${Math.round(results.seconds / 60)} min (1-minute load average ${m.loadAverage.atStart} at the start, ` +
      `${m.loadAverage.atEnd} at the end). Raw figures: [bench/results/latest.json](../bench/results/latest.json).`,
    '',
    table(results.rows),
    '',
    ...results.notes.map((note) => `- ${note}`),
    '',
    `\`${results.summary}\``,
    END,
  ].join('\n');
}

/** Replaces the block between the bench markers in docs/performance.md; false when the markers are missing. */
export function updatePerformanceDoc(results: Results, path = PERFORMANCE_DOC): boolean {
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) return false;
  writeFileSync(path, text.slice(0, start) + benchBlock(results) + text.slice(end + END.length));
  return true;
}
