import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { acceptOrShed, type LoadResult } from '../../bench/lib/load.ts';
import { parseOptions } from '../../bench/lib/options.ts';
import { checkOrder } from '../../bench/lib/order.ts';
import { benchBlock, PERFORMANCE_DOC, updatePerformanceDoc } from '../../bench/lib/performance-doc.ts';
import { measured, notes, summary, table } from '../../bench/lib/report.ts';
import { median, percentile } from '../../bench/lib/stats.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';

/** The machine a bench run reports, for the table tests. */
const MACHINE = {
  loadAverage: { atStart: 0.1, atEnd: 1.5 },
  cpu: 'AMD EPYC',
  cores: 2,
  memoryMb: 24_000,
  freeMemoryMb: 20_000,
  node: 'v20.20.0',
  platform: 'linux x64',
};

describe('bench harness', () => {
  it('takes the median of rounds and nearest-rank percentiles', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99), 10);
    assert.equal(percentile([5, 1, 3], 50), 3);
  });

  it('keeps the issue sizes by default and lets the isolation backlog be overridden', () => {
    const full = parseOptions([]);
    assert.equal(full.sizes.isolation.backlog, 1_000_000);
    assert.equal(full.sizes.ingest.connections, 64);
    assert.equal(full.sizes.batch.size, 1000);
    assert.equal(full.sizes.dispatch.count, 200_000);
    assert.equal(parseOptions(['--isolation-backlog', '50000']).sizes.isolation.backlog, 50_000);
    assert.deepEqual(parseOptions(['--scenario', 'ingest,claim', '--scenario=auth']).scenarios, [
      'ingest',
      'claim',
      'auth',
    ]);
    assert.ok(parseOptions(['--quick']).sizes.isolation.backlog < 10_000);
  });

  it('refuses fewer than three rounds and unknown flags', () => {
    assert.throws(() => parseOptions(['--rounds', '2']), /at least 3/);
    assert.throws(() => parseOptions(['--fast']), /unknown flag/);
    assert.throws(() => parseOptions(['--isolation-backlog', 'many']), /positive integer/);
    assert.throws(() => parseOptions(['--quick', '--readme']), /full-size run/);
    assert.throws(() => parseOptions(['--quick', '--docs']), /full-size run/);
  });

  it('counts only accepted requests and tolerates only overload answers', () => {
    const load = (statusCodes: Record<string, number>): LoadResult => ({
      requests: Object.values(statusCodes).reduce((a, b) => a + b, 0),
      seconds: 2,
      rps: 50,
      latency: { mean: 1, p50: 1, p90: 1, p99: 1, max: 1 },
      errors: 0,
      timeouts: 0,
      non2xx: 0,
      statusCodes,
      samples: [{ status: 500, body: '{"code":"INTERNAL"}' }],
    });
    const shed = acceptOrShed(load({ 201: 90, 503: 10 }), 201, 'ingest');
    assert.equal(shed.rps, 45);
    assert.equal(shed.shed, 10);
    assert.throws(
      () => acceptOrShed(load({ 201: 90, 500: 10 }), 201, 'ingest'),
      /90 of 100 answered 201.*INTERNAL/,
    );
  });

  it('judges targets and says by how much one was missed', () => {
    const rows = [
      measured('ingest', 'ratio', 0.4, 'x', { target: { bound: 0.5, better: 'higher', text: '>= 0.5' } }),
      measured('ingest', 'p99', 12, 'ms', { target: { bound: 20, better: 'lower', text: '<= 20 ms' } }),
      // A target in seconds on a row in milliseconds: the bound, not the text's number, is compared.
      measured('callbacks', 'lag p99', 1500, 'ms', {
        target: { bound: 1000, better: 'lower', text: '<= 1 s' },
      }),
    ];
    assert.equal(rows[0]?.met, false);
    assert.equal(rows[1]?.met, true);
    assert.match(notes(rows).join('\n'), /ingest \/ ratio: missed target >= 0.5 \(20% off\)/);
    assert.match(notes(rows).join('\n'), /callbacks \/ lag p99: missed target <= 1 s \(50% off\)/);
    assert.match(summary(rows, 12), /^bench: 1\/3 targets met \(12 s\)$/);
    assert.match(table(rows), /\| ingest +\| ratio +\| 0.4 x/);
  });

  it('finds a CRITICAL claimed after a LOW that was accepted later', async () => {
    const dir = tempDir();
    const store = createSqliteStore(dir);
    const insert = store.db.prepare(
      `INSERT INTO notifications (seq, id, tenant, channel, priority, status, recipient, created_at, updated_at)
       VALUES (?, ?, 'default', 'email', ?, 'PROCESSING', '{}', 0, 0)`,
    );
    const processed = store.db.prepare(
      "INSERT INTO notification_events (id, notification_seq, type, at) VALUES (?, ?, 'PROCESSING', 0)",
    );
    // Accepted in seq order: CRITICAL 1, LOW 2 (never claimed), CRITICAL 3, LOW 4. Claimed in
    // event order: CRITICAL 1, LOW 4, CRITICAL 3. LOW 4 overtook CRITICAL 3: one violation.
    insert.run(1, 'c1', 0);
    insert.run(2, 'l2', 3);
    insert.run(3, 'c3', 0);
    insert.run(4, 'l4', 3);
    processed.run(1, 1);
    processed.run(2, 4);
    processed.run(3, 3);
    await store.close();
    assert.deepEqual(checkOrder(dir, ['c1', 'c3']), { violations: 1, laterLow: 2, laterLowProcessed: 1 });
    assert.equal(checkOrder(dir, ['c3']).violations, 1);
  });
});

describe('bench README block', () => {
  it('shows the machine, the table and the summary between the markers', () => {
    const rows = [
      measured('memory', 'peak RSS', 210, 'MB', {
        target: { bound: 300, better: 'lower', text: '<= 300 MB' },
      }),
    ];
    const block = benchBlock({
      startedAt: '2026-11-21T08:00:00.000Z',
      seconds: 600,
      machine: MACHINE,
      rows,
      notes: notes(rows),
      summary: summary(rows, 600),
    });
    assert.match(block, /^<!-- bench:start -->\nMeasured 2026-11-21 08:00 UTC on AMD EPYC, 2 cores/);
    assert.match(block, /load average 0.1 at the start, 1.5 at the end/);
    assert.match(block, /\| memory +\| peak RSS +\| 210 MB +\| <= 300 MB +\| met +\|/);
    assert.match(block, /`bench: 1\/1 targets met \(600 s\)`\n<!-- bench:end -->$/);
  });
  it('writes the table into docs/performance.md, not the README (#49.6)', () => {
    assert.equal(PERFORMANCE_DOC, join(import.meta.dirname, '..', '..', 'docs', 'performance.md'));
    const doc = readFileSync(PERFORMANCE_DOC, 'utf8');
    assert.match(doc, /<!-- bench:start -->[\s\S]*<!-- bench:end -->/);
    const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
    assert.doesNotMatch(readme, /bench:start/);
    const copy = join(tempDir('herald-perf-doc-'), 'performance.md');
    writeFileSync(copy, 'before\n<!-- bench:start -->\nold\n<!-- bench:end -->\nafter\n');
    const results = {
      startedAt: '2026-11-21T08:00:00.000Z',
      seconds: 60,
      machine: { ...MACHINE, loadAverage: { atStart: 0.1, atEnd: 0.2 } },
      rows: [],
      notes: [],
      summary: 'bench: 0/0 targets met (60 s)',
    };
    assert.equal(updatePerformanceDoc(results, copy), true);
    const written = readFileSync(copy, 'utf8');
    assert.match(written, /^before\n<!-- bench:start -->\nMeasured 2026-11-21 08:00 UTC/);
    assert.match(written, /\[bench\/results\/latest.json\]\(\.\.\/bench\/results\/latest.json\)/);
    assert.match(written, /<!-- bench:end -->\nafter\n$/);
  });
});
