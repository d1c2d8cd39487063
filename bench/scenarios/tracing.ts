import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { notification } from '../lib/bodies.ts';
import { deploy } from '../lib/deploy.ts';
import type { BenchOptions } from '../lib/options.ts';
import { measured, type Row } from '../lib/report.ts';
import { alternate } from '../lib/rounds.ts';
import { median } from '../lib/stats.ts';
import type { Scenario } from './types.ts';

/** An OTLP/HTTP endpoint that reads each export and drops it: the exporter's whole cost, no collector's. */
async function startDiscardingCollector(): Promise<{
  url: string;
  exports: () => number;
  stop(): Promise<void>;
}> {
  let exports = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      exports += 1;
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Ingest and dispatch with tracing on against off (docs/tracing.md): two `npm start` Heralds on
 * SQLite, one exporting every span (100 % sampled, http/protobuf, to a local endpoint that
 * discards them), one without the OTEL_* variables, loaded in alternating rounds with
 * POST /notifications. Each delivers what it accepts to the sandbox meanwhile, so the traced one
 * makes the spans of each notification (server, commit, process, render, send).
 */
async function tracingRows(options: BenchOptions): Promise<Row[]> {
  const name = 'tracing';
  const { ingest, rounds } = options.sizes;
  const collector = await startDiscardingCollector();
  const traced = await deploy('sqlite', {
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_TRACES_SAMPLER: 'always_on',
    },
  });
  const plain = await deploy('sqlite', {});
  try {
    const load = (auth: Record<string, string>, urls: string[]) => ({
      method: 'POST' as const,
      path: '/notifications',
      headers: auth,
      body: JSON.stringify(notification()),
      connections: ingest.connections,
      urls,
    });
    const result = await alternate(
      name,
      rounds,
      ingest.warmup,
      ingest.round,
      load(traced.api.auth, traced.urls),
      load(plain.api.auth, plain.urls),
      { herald: 201, reference: 201 },
      'untraced',
    );
    if (collector.exports() === 0) throw new Error('the traced Herald exported no spans');
    return [
      measured(name, 'requests/s with tracing on, ratio to off', median(result.ratios), 'x', {
        target: { bound: 0.8, better: 'higher', text: '>= 0.8' },
        note:
          `median of ${rounds} alternating rounds, ${ingest.connections} connections, npm start (dispatch ` +
          `to the sandbox meanwhile), always_on, http/protobuf to a discarding endpoint ` +
          `(${collector.exports()} exports); per round: ${result.ratios.map((r) => r.toFixed(3)).join(', ')}`,
      }),
      measured(name, 'traced requests/s', median(result.herald.map((r) => r.rps)), '/s'),
      measured(name, 'untraced requests/s', median(result.reference.map((r) => r.rps)), '/s'),
    ];
  } finally {
    await Promise.all([traced.stop(), plain.stop()]);
    await collector.stop();
  }
}

export const tracingScenario: Scenario = {
  name: 'tracing',
  title: '#53. Tracing: ingest and dispatch with OpenTelemetry on (100 % sampled) against off',
  run: tracingRows,
};
