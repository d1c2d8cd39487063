/**
 * `npm run bench`: starts Herald as a user does, drives it from separate load processes, prints
 * a table, writes bench/results/latest.json and ends with a one-line summary. Flags: see USAGE.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { Unavailable } from './lib/api.ts';
import { progress, setQuiet } from './lib/log.ts';
import { type BenchOptions, parseOptions, USAGE } from './lib/options.ts';
import { updatePerformanceDoc } from './lib/performance-doc.ts';
import { stopPostgres } from './lib/postgres.ts';
import { killChildren, ROOT } from './lib/proc.ts';
import { machine, notes, type Row, summary, table } from './lib/report.ts';
import { removeTempDirs } from './lib/tmp.ts';
import { SCENARIOS } from './scenarios/index.ts';
import { postgresScenarios } from './scenarios/postgres.ts';
import type { Scenario } from './scenarios/types.ts';

function failureRow(scenario: Scenario, error: unknown): Row {
  const unavailable = error instanceof Unavailable;
  const message = error instanceof Error ? error.message : String(error);
  if (!unavailable)
    process.stderr.write(`${scenario.name} failed: ${error instanceof Error ? error.stack : message}\n`);
  return {
    scenario: scenario.name,
    metric: scenario.title,
    value: null,
    unit: '',
    met: null,
    status: unavailable ? 'unavailable' : 'error',
    note: unavailable ? `not available yet: ${message}` : message.split('\n').slice(0, 4).join(' | '),
  };
}

/**
 * The scenarios to run, in order: the named ones or all; with --postgres each scenario that has
 * a PostgreSQL variant (ingest, dispatch) is followed by it, so their rows sit side by side.
 */
function selectScenarios(options: BenchOptions): Scenario[] {
  const all = [...SCENARIOS, ...postgresScenarios];
  const chosen = (options.scenarios ?? SCENARIOS.map((s) => s.name)).map((name) => {
    const found = all.find((s) => s.name === name);
    if (!found) throw new Error(`unknown scenario "${name}"\n\n${USAGE}`);
    return found;
  });
  if (!options.postgres) return chosen;
  return chosen.flatMap((scenario) => {
    const variant = postgresScenarios.find((p) => p.name === `${scenario.name}-postgres`);
    return variant && !chosen.includes(variant) ? [scenario, variant] : [scenario];
  });
}

/** How one scenario went, recorded in the results beside its rows. */
interface ScenarioRun {
  name: string;
  title: string;
  status: Row['status'];
  seconds: number;
}

async function runAll(
  selected: Scenario[],
  options: BenchOptions,
): Promise<{ rows: Row[]; runs: ScenarioRun[] }> {
  const rows: Row[] = [];
  const runs: ScenarioRun[] = [];
  for (const scenario of selected) {
    progress(`== ${scenario.title}`);
    const started = performance.now();
    let status: Row['status'] = 'ok';
    try {
      rows.push(...(await scenario.run(options)));
    } catch (error) {
      const row = failureRow(scenario, error);
      status = row.status;
      rows.push(row);
    }
    const seconds = (performance.now() - started) / 1000;
    runs.push({ name: scenario.name, title: scenario.title, status, seconds: Math.round(seconds) });
    progress(`== ${scenario.name} done in ${seconds.toFixed(1)} s`);
  }
  return { rows, runs };
}

async function main(): Promise<number> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  let options: BenchOptions;
  let selected: Scenario[];
  try {
    options = parseOptions(process.argv.slice(2));
    selected = selectScenarios(options);
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  setQuiet(options.quiet);
  const startedAt = new Date();
  const loadAtStart = loadavg()[0] ?? 0;
  let rows: Row[];
  let runs: ScenarioRun[];
  try {
    ({ rows, runs } = await runAll(selected, options));
  } finally {
    await stopPostgres();
    if (!options.keep) removeTempDirs();
  }
  // Quick sizes only check that the harness works end to end; their figures mean nothing.
  if (options.quick) for (const row of rows) row.met = null;
  const seconds = (Date.now() - startedAt.getTime()) / 1000;
  const out = resolve(ROOT, options.out ?? `bench/results/${options.quick ? 'quick' : 'latest'}.json`);
  const line = `${summary(rows, seconds)}${options.quick ? ' [--quick: harness check, targets not judged]' : ''}`;
  const results = {
    startedAt: startedAt.toISOString(),
    seconds: Math.round(seconds),
    machine: machine(loadAtStart),
    options: {
      quick: options.quick,
      postgres: options.postgres,
      scenarios: options.scenarios,
      sizes: options.sizes,
    },
    scenarios: runs,
    rows,
    notes: notes(rows),
    summary: line,
  };
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(table(rows));
  console.log('');
  for (const note of results.notes) console.log(`- ${note}`);
  console.log(`\nResults written to ${out}`);
  if (options.docs) {
    console.log(
      updatePerformanceDoc(results)
        ? 'docs/performance.md bench table updated'
        : 'docs/performance.md has no bench markers',
    );
  }
  console.log(line);
  return rows.some((r) => r.status === 'error') ? 1 : 0;
}

// Interrupted or crashed: no Herald, load worker or bare server may outlive the bench.
process.once('exit', killChildren);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killChildren();
    removeTempDirs();
    process.exit(130);
  });
}

process.exitCode = await main();
