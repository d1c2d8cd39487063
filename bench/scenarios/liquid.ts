import { type Api, getNotification, login } from '../lib/api.ts';
import { probeHealth } from '../lib/health-probe.ts';
import { startHerald } from '../lib/herald.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { measured, type Row } from '../lib/report.ts';
import { startSmtp } from '../lib/smtp.ts';
import { percentile } from '../lib/stats.ts';
import type { Scenario } from './types.ts';

/** About 7.8 KB of Liquid, different for each `i`: the syntax check knows no verdict for it. */
function distinctLiquid(i: number): string {
  const unit = `{% if n > ${i} %}{{ name | upcase }} {{ n | plus: ${i} }}{% else %}{{ name }}{% endif %} `;
  return `Hi {{ name }} #${i} ${unit.repeat(Math.ceil(7800 / unit.length))}`.slice(0, 7800);
}

/**
 * A batch of 1,000 emails, each with its own ~7.8 KB of inline Liquid (about 7.2 MiB of JSON); or,
 * as a control, the same text with its markup's braces taken out (nothing to parse).
 */
function liquidBatch(round: number, markup: boolean, items: number): string {
  return JSON.stringify({
    notifications: Array.from({ length: items }, (_, i) => {
      const text = distinctLiquid(round * items + i);
      return {
        // Email: an SMS's text stops at 1,600 characters (Twilio's limit, refused at acceptance).
        channel: 'email',
        priority: 'LOW',
        recipient: { email: 'ada@example.com' },
        content: { subject: 'Hello', text: markup ? text : text.replace(/[{}%]/g, '') },
        variables: { name: 'Ada', n: i },
        scheduledAt: new Date(Date.now() + 86_400_000).toISOString(),
      };
    }),
  });
}

/**
 * Issue 46, item 1: parsing inline Liquid must not hold the API's event loop. Two senders each
 * post batches of 1,000 items with distinct 7.8 KB Liquid sources, two batches at a time, while
 * GET /health is probed every 10 ms from a process of its own.
 */
async function parsing(options: BenchOptions): Promise<Row[]> {
  const items = options.sizes.liquid.batchItems;
  return [...(await batches(true, items)), ...(await batches(false, items))];
}

async function batches(markup: boolean, items: number): Promise<Row[]> {
  const herald = await startHerald({ env: { HERALD_BATCH_BODY_LIMIT: String(16 * 1024 * 1024) } });
  let probe: ReturnType<typeof probeHealth> | undefined;
  try {
    const api = await login(herald.url);
    const bodies = [0, 1, 2, 3].map((round) => liquidBatch(round, markup, items));
    probe = probeHealth(herald.url, 10);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const batchMs: number[] = [];
    const statuses: number[] = [];
    for (const pair of [bodies.slice(0, 2), bodies.slice(2)]) {
      progress(`liquid: two batches of 1,000 distinct 7.8 KB sources, ${markup ? 'Liquid' : 'no markup'}`);
      await Promise.all(
        pair.map(async (body) => {
          const start = performance.now();
          const response = await fetch(`${herald.url}/notifications/batch`, {
            method: 'POST',
            headers: { ...api.auth, 'content-type': 'application/json' },
            body,
          });
          await response.arrayBuffer();
          statuses.push(response.status);
          batchMs.push(performance.now() - start);
        }),
      );
    }
    const { ms: health, failed } = await probe.stop();
    return [
      measured(
        'liquid',
        markup
          ? 'GET /health p99 while 1,000-item batches of distinct Liquid arrive'
          : 'GET /health p99, the same batches without markup (control: what is not parsing)',
        percentile(health, 99),
        'ms',
        {
          target: markup ? { bound: 50, better: 'lower', text: '< 50 ms' } : undefined,
          note:
            `${health.length} probes (${failed} failed), max ${Math.round(Math.max(...health))} ms; ` +
            `4 batches, 2 at a time, answered ${statuses.join(', ')} in ${batchMs.map((ms) => Math.round(ms)).join(', ')} ms`,
        },
      ),
    ];
  } finally {
    await probe?.stop().catch(() => undefined);
    await herald.stop();
  }
}

/** Rendering 40,000,000 loop steps: Liquid cuts it at the render limit. */
const RUNAWAY = '{% for i in (1..10000) %}{% for j in (1..4000) %}{% endfor %}{% endfor %}';

/** An SMTP server that records when each message to `critical-<n>@…` is received. */
async function recordingSmtp() {
  const received = new Map<string, number>();
  const server = await startSmtp((envelope) => {
    const at = performance.timeOrigin + performance.now();
    for (const r of envelope.rcptTo) received.set(r.address, at);
    return 0;
  });
  return { ...server, received };
}

async function post(api: Api, path: string, body: unknown) {
  const response = await fetch(`${api.url}${path}`, {
    method: 'POST',
    headers: { ...api.auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/**
 * Issue 46, item 10: while 3 previews and 3 inline SMS render past the render limit, a CRITICAL
 * email must reach its SMTP server as if nothing else ran (within 100 ms of its 201). Each
 * round starts the six runaway renders, then sends one CRITICAL email 20 ms later; the figure
 * is from the CRITICAL's 201 at the client to the end of its DATA at the SMTP server (one
 * clock: both are in this process).
 */
async function critical(options: BenchOptions): Promise<Row[]> {
  const rounds = options.sizes.liquid.rounds;
  const smtp = await recordingSmtp();
  const herald = await startHerald({
    env: {
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}?rateLimit=0`,
      EMAIL_FROM: 'Herald <noreply@example.com>',
    },
  });
  try {
    const api = await login(herald.url);
    await post(api, '/templates', { key: 'runaway', channel: 'sms', text: RUNAWAY });
    // A first email loads the SMTP provider and opens its connection: not part of the figure.
    const warmAddress = 'critical-warm@example.com';
    await post(api, '/notifications', {
      channel: 'email',
      priority: 'CRITICAL',
      recipient: { email: warmAddress },
      content: { subject: 'Warm-up', text: 'Warm-up' },
    });
    for (let i = 0; i < 250 && !smtp.received.has(warmAddress); i++)
      await new Promise((r) => setTimeout(r, 20));
    const latencies: number[] = [];
    const stages: string[] = [];
    const missed: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const runaway = [
        ...[0, 1, 2].map(() => post(api, '/templates/runaway/preview', { variables: {} })),
        ...[0, 1, 2].map(() =>
          post(api, '/notifications', {
            channel: 'sms',
            recipient: { phone: '+15550101234' },
            content: { text: RUNAWAY },
          }),
        ),
      ];
      await new Promise((resolve) => setTimeout(resolve, 20));
      const address = `critical-${round}@example.com`;
      const sent = await post(api, '/notifications', {
        channel: 'email',
        priority: 'CRITICAL',
        recipient: { email: address },
        content: { subject: 'Sign-in code for {{ name }}', text: 'Your code is {{ code }}' },
        variables: { name: 'Ada', code: 482913 },
      });
      const acceptedAt = performance.timeOrigin + performance.now();
      await Promise.all(runaway);
      for (let i = 0; i < 100 && !smtp.received.has(address); i++)
        await new Promise((r) => setTimeout(r, 20));
      const at = smtp.received.get(address);
      if (sent.status !== 201) throw new Error(`CRITICAL ${round}: ${sent.status}`);
      if (at === undefined) {
        const view = await getNotification(api, sent.body.notificationId as string);
        missed.push(`${view.status}: ${JSON.stringify(view.events.at(-1))}`);
        continue;
      }
      latencies.push(at - acceptedAt);
      if (process.env.BENCH_STAGES) {
        const view = await getNotification(api, sent.body.notificationId as string);
        const times = view.events.map(
          (e) => `${e.type} +${Date.parse(e.at) - Date.parse(view.events[0]?.at ?? '')}`,
        );
        stages.push(times.join(' '));
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    progress(`liquid: CRITICAL events of the first rounds: ${stages.join(' | ')}`);
    return [
      measured(
        'liquid',
        'CRITICAL 201 to SMTP receipt p99, 6 runaway renders running',
        percentile(latencies, 99),
        'ms',
        {
          target: { bound: 100, better: 'lower', text: '< 100 ms' },
          note:
            `${rounds} rounds of 3 previews + 3 inline SMS past the render limit; p50 ${Math.round(percentile(latencies, 50))} ms, ` +
            `max ${Math.round(Math.max(...latencies))} ms; all: ${latencies.map(Math.round).join(', ')}` +
            missed.map((m) => `; not received: ${m}`).join(''),
        },
      ),
    ];
  } finally {
    await herald.stop();
    await smtp.close();
  }
}

export const liquidParseScenario: Scenario = {
  name: 'liquid-parse',
  title: 'Liquid isolation: GET /health while batches of distinct inline Liquid arrive',
  run: parsing,
};

export const liquidCriticalScenario: Scenario = {
  name: 'liquid-critical',
  title: 'Liquid isolation: a CRITICAL email beside six renders past the render limit',
  run: critical,
};
