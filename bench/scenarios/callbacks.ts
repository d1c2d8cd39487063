import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { requireRoute } from '../lib/api.ts';
import { notification } from '../lib/bodies.ts';
import { deploy } from '../lib/deploy.ts';
import { deliveredSpan, watchDrain } from '../lib/drain.ts';
import { fillBacklog } from '../lib/fill.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { runPaced } from '../lib/paced.ts';
import { measured, type Row } from '../lib/report.ts';
import { percentile } from '../lib/stats.ts';
import type { Scenario } from './types.ts';

const FIXTURES = join(import.meta.dirname, '../../test/fixtures/push');
const CALLBACK_RATE = 50_000;

/** A receiver that answers 204 at once and keeps, per message, status change to receipt in ms. */
async function startReceiver() {
  const lags: number[] = [];
  const server = createServer(
    { key: readFileSync(join(FIXTURES, 'server.key')), cert: readFileSync(join(FIXTURES, 'server.pem')) },
    (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        const at = Date.now();
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { timestamp: string };
        lags.push(at - Date.parse(body.timestamp));
        response.writeHead(204).end();
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    lags,
    url: `https://localhost:${port}/bench`,
    host: `localhost:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Drained {
  perSecond: number;
  lags: number[];
  streamed: number;
}

/**
 * Drains `count` NORMAL to the sandbox on `npm start`'s layout (one process), with or without one
 * callback (DELIVERED), with `streams` live streams connected, and measures the drain rate from
 * the store's DELIVERED events, and each callback's lag from the change to its receipt.
 */
async function drain(count: number, streams: number, callback: boolean): Promise<Drained> {
  const receiver = callback ? await startReceiver() : undefined;
  const env: Record<string, string> = receiver
    ? {
        HERALD_CALLBACK_ALLOWED_HOSTS: receiver.host,
        NODE_EXTRA_CA_CERTS: join(FIXTURES, 'ca.pem'),
        // The default 2,000/s per callback would be the bottleneck of a 100,000 burst; this
        // measures what the sender does when the limit is the receiver's to set.
        HERALD_CALLBACK_RATE: String(CALLBACK_RATE),
      }
    : {};
  const label = callback ? (streams > 0 ? `a callback + ${streams} streams` : 'a callback') : 'baseline';
  const filler = await deploy('sqlite', { roles: 'auth,api', env });
  const dataDir = filler.processes[0]?.dataDir as string;
  try {
    await requireRoute(filler.api, 'GET', '/callbacks', undefined, 'status callbacks');
    if (receiver) {
      const created = await filler.api.request('POST', '/callbacks', {
        url: receiver.url,
        events: ['DELIVERED'],
      });
      if (created.status !== 201)
        throw new Error(`POST /callbacks: ${created.status} ${JSON.stringify(created.body)}`);
    }
    await fillBacklog(filler.api, count, 'NORMAL', `callbacks (${label}) backlog`, filler.urls);
  } finally {
    await filler.stop();
  }
  progress(`callbacks (${label}): draining ${count.toLocaleString('en-US')}`);
  const runner = await deploy('sqlite', { dataDir, env });
  const streaming = new AbortController();
  let streamed = 0;
  try {
    // Plain readers that count events: the bench shares the machine, so its clients stay cheap.
    for (let i = 0; i < streams; i++) {
      const response = await fetch(`${runner.api.url}/notifications/stream`, {
        headers: runner.api.auth,
        signal: streaming.signal,
      });
      void (async () => {
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        const decoder = new TextDecoder();
        let tail = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          // Keep the end of each chunk: a marker may straddle two.
          const text = tail + decoder.decode(value, { stream: true });
          streamed += text.split('event: status').length - 1;
          const cut = text.lastIndexOf('event: status');
          tail = text.slice(Math.max(cut + 13, text.length - 12));
        }
      })().catch(() => undefined);
    }
    const drained = await watchDrain(runner.api, Math.max(120_000, count), `callbacks (${label})`);
    if (drained.left > 0) throw new Error(`${drained.left} still outstanding`);
    if (receiver) {
      const deadline = Date.now() + Math.max(60_000, count);
      while (receiver.lags.length < count && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 200));
    }
    const span = await deliveredSpan({ dataDir });
    return { perSecond: span?.perSecond ?? drained.perSecond, lags: receiver?.lags ?? [], streamed };
  } finally {
    streaming.abort();
    await runner.stop();
    await receiver?.close();
  }
}

/**
 * Callback lag while the receiver keeps up: notifications accepted at a steady `perSecond` (an
 * open-loop sender in its own process) on `npm start`'s layout with one callback (DELIVERED),
 * each callback's lag from the change to its receipt, under the default HERALD_CALLBACK_RATE
 * (2,000/s). The burst above asks the bench's receiver, on the same 2 cores as Herald, for as
 * many callbacks a second as dispatch makes changes.
 */
async function steady(perSecond: number, forMs: number): Promise<number[]> {
  const receiver = await startReceiver();
  const env = {
    HERALD_CALLBACK_ALLOWED_HOSTS: receiver.host,
    NODE_EXTRA_CA_CERTS: join(FIXTURES, 'ca.pem'),
  };
  const herald = await deploy('sqlite', { env });
  try {
    const created = await herald.api.request('POST', '/callbacks', {
      url: receiver.url,
      events: ['DELIVERED'],
    });
    if (created.status !== 201)
      throw new Error(`POST /callbacks: ${created.status} ${JSON.stringify(created.body)}`);
    progress(`callbacks (steady): ${perSecond.toLocaleString('en-US')}/s for ${forMs / 1000} s`);
    const sent = await runPaced({
      url: herald.api.url,
      path: '/notifications',
      headers: herald.api.auth,
      body: JSON.stringify(notification('NORMAL')),
      everyMs: 1000 / perSecond,
      forMs,
      collect: false,
    });
    if (sent.failures.length > 0) throw new Error(`steady sender: ${sent.failures.join('; ')}`);
    const deadline = Date.now() + 60_000;
    while (receiver.lags.length < sent.acceptedCount && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    if (receiver.lags.length < sent.acceptedCount)
      throw new Error(`${receiver.lags.length} of ${sent.acceptedCount} callbacks received`);
    return receiver.lags;
  } finally {
    await herald.stop();
    await receiver.close();
  }
}

export const callbacksScenario: Scenario = {
  name: 'callbacks',
  title: '15. Callbacks and live streams: lag, and their cost to dispatch',
  async run(options: BenchOptions): Promise<Row[]> {
    const { count, streams, steadyPerSecond, steadyMs } = options.sizes.callbacks;
    const steadyLags = await steady(steadyPerSecond, steadyMs);
    const baseline = await drain(count, 0, false);
    const callbackOnly = await drain(count, 0, true);
    const both = await drain(count, streams, true);
    const n = count.toLocaleString('en-US');
    const rate = (d: Drained) => `${Math.round(d.perSecond).toLocaleString('en-US')}/s`;
    const received = (d: Drained) => `${d.lags.length.toLocaleString('en-US')} of ${n} callbacks received`;
    const lagRows = (d: Drained, what: string) => [
      measured('callbacks', `callback lag p50, change to receipt (${what})`, percentile(d.lags, 50), 'ms', {
        note: received(d),
      }),
      measured('callbacks', `callback lag p99 (${what})`, percentile(d.lags, 99), 'ms', {
        target: { bound: 1000, better: 'lower', text: '<= 1 s' },
        note: received(d),
      }),
    ];
    const cost = (d: Drained, what: string, extra = '') =>
      measured(
        'callbacks',
        `dispatch with ${what} vs without (${n} NORMAL)`,
        d.perSecond / baseline.perSecond,
        '×',
        {
          target: { bound: 0.9, better: 'higher', text: '>= 0.9× (<= 10% less)' },
          note: `HERALD_CALLBACK_RATE=${CALLBACK_RATE}; ${rate(d)} against ${rate(baseline)} without, from the store's DELIVERED events${extra}`,
        },
      );
    const steadyNote = `${steadyLags.length.toLocaleString('en-US')} notifications at ${steadyPerSecond.toLocaleString('en-US')}/s, all received (the receiver keeps up with this rate)`;
    return [
      measured(
        'callbacks',
        `callback lag p50, steady ${steadyPerSecond.toLocaleString('en-US')}/s`,
        percentile(steadyLags, 50),
        'ms',
        {
          note: steadyNote,
        },
      ),
      measured(
        'callbacks',
        `callback lag p99, steady ${steadyPerSecond.toLocaleString('en-US')}/s`,
        percentile(steadyLags, 99),
        'ms',
        {
          target: { bound: 1000, better: 'lower', text: '<= 1 s' },
          note: steadyNote,
        },
      ),
      ...lagRows(callbackOnly, 'one callback'),
      cost(callbackOnly, 'one callback'),
      ...lagRows(both, `one callback and ${streams} streams`),
      cost(
        both,
        `one callback and ${streams} streams`,
        `; the streams (read by the bench on the same 2 cores) received ${both.streamed.toLocaleString('en-US')} changes in all`,
      ),
    ];
  },
};
