/**
 * Where a CRITICAL's time goes inside the worker: reads the file a Herald run with
 * HERALD_DISPATCH_TRACE wrote (src/dispatch/urgent-trace.ts) and prints, for each step between
 * two stages, its p50, p99 and max over the traced CRITICALs, which cycles claimed and wrote
 * them, and the worker thread's event-loop delay.
 *
 *   HERALD_DISPATCH_TRACE=/tmp/trace npm run bench -- --scenario isolation-peer --postgres
 *   node --import tsx bench/urgent-trace.ts /tmp/trace.postgres
 */
import { readFileSync } from 'node:fs';
import { STAGES, type Stage } from '../src/dispatch/urgent-trace.ts';
import { percentile } from './lib/stats.ts';

interface Entry {
  seq: number;
  at: Partial<Record<Stage, number>>;
  via: { claim?: string; write?: string };
}
interface LoopLine {
  loop: { p50: number; p99: number; max: number };
}

// A reader that closes early (`| head`) ends the report, not with an EPIPE stack.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const file = process.argv[2];
if (!file) throw new Error('usage: bench/urgent-trace.ts <trace file>');
const lines = readFileSync(file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as Entry | LoopLine);
const entries = lines.filter((l): l is Entry => 'seq' in l);
const loops = lines.filter((l): l is LoopLine => 'loop' in l).map((l) => l.loop);

const fixed = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const row = (label: string, values: number[]) =>
  `${label.padEnd(34)} ${String(values.length).padStart(5)} ${fixed(percentile(values, 50)).padStart(8)} ${fixed(percentile(values, 99)).padStart(8)} ${fixed(values.length ? Math.max(...values) : Number.NaN).padStart(8)}`;

console.log(`${entries.length} CRITICALs traced in ${file}\n`);
console.log(
  `${'step (ms)'.padEnd(34)} ${'n'.padStart(5)} ${'p50'.padStart(8)} ${'p99'.padStart(8)} ${'max'.padStart(8)}`,
);
const between = (from: Stage, to: Stage) =>
  entries
    .map((e) =>
      e.at[from] !== undefined && e.at[to] !== undefined
        ? (e.at[to] as number) - (e.at[from] as number)
        : Number.NaN,
    )
    .filter(Number.isFinite);
for (let i = 1; i < STAGES.length; i++) {
  const from = STAGES[i - 1] as Stage;
  const to = STAGES[i] as Stage;
  console.log(row(`${from} -> ${to}`, between(from, to)));
}
console.log(row('accepted -> claimStart (-> PROCESSING)', between('accepted', 'claimStart')));
console.log(row('accepted -> writeStart (-> SENT)', between('accepted', 'writeStart')));
console.log(row('claimStart -> writeStart (PROCESSING -> SENT)', between('claimStart', 'writeStart')));
console.log(row('claimStart -> committed', between('claimStart', 'committed')));

const count = (key: 'claim' | 'write') => {
  const by = new Map<string, number>();
  for (const e of entries) by.set(e.via[key] ?? '?', (by.get(e.via[key] ?? '?') ?? 0) + 1);
  return [...by].map(([via, n]) => `${via} ${n}`).join(', ');
};
console.log(`\nclaimed by: ${count('claim')}; written by: ${count('write')}`);
if (loops.length > 0) {
  const worst = (k: 'p99' | 'max') => Math.max(...loops.map((l) => l[k]));
  console.log(
    `worker event-loop delay, per second (${loops.length} s): p50 of p99s ${fixed(
      percentile(
        loops.map((l) => l.p99),
        50,
      ),
    )} ms, ` + `worst p99 ${fixed(worst('p99'))} ms, worst max ${fixed(worst('max'))} ms`,
  );
}
