import { getNotification, login } from '../lib/api.ts';
import { batch, notification } from '../lib/bodies.ts';
import { fillBacklog } from '../lib/fill.ts';
import { probeHealth } from '../lib/health-probe.ts';
import { startHerald } from '../lib/herald.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { runPaced } from '../lib/paced.ts';
import { measured, type Row } from '../lib/report.ts';
import { startSmtp } from '../lib/smtp.ts';
import { percentile } from '../lib/stats.ts';
import { criticalLatencies } from './isolation-latency.ts';
import type { Scenario } from './types.ts';

/** An SMTP server that takes 2 s over every message except those to critical@… (the slow LOW provider). */
function slowSmtp(): ReturnType<typeof startSmtp> {
  return startSmtp((envelope) => (envelope.rcptTo.some((r) => r.address.startsWith('critical@')) ? 0 : 2000));
}

/** A body whose metadata nests 6,000 arrays (refused with 400 at validation). */
const deepBody = JSON.stringify({ ...notification('NORMAL'), metadata: '__DEEP__' }).replace(
  '"__DEEP__"',
  `${'['.repeat(6000)}${']'.repeat(6000)}`,
);

/** About a second of Liquid work unless cut (the render budget is 100 ms). */
const HEAVY = '{% for i in (1..10000) %}{% for j in (1..3000) %}{% endfor %}{% endfor %}';

/**
 * Isolation under abuse (issue 11): a LOW backlog queued and draining through an SMTP provider
 * that takes 2 s a LOW message (32 connections: LOW may hold 16), while another tenant sends heavy templates (renders cut at their
 * budget) and bad payloads, and a third party, the default tenant, sends one CRITICAL email
 * every 10 ms to the same slow provider. CRITICAL latency is acceptance to the provider call (the
 * PROCESSING event); /health is probed every 10 ms throughout, from a process of its own.
 */
async function run(options: BenchOptions): Promise<Row[]> {
  const s = options.sizes.isolation;
  const smtp = await slowSmtp();
  const herald = await startHerald({
    env: {
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}?maxConnections=32&rateLimit=0`,
      EMAIL_FROM: 'Herald <noreply@example.com>',
    },
  });
  // Stopped however the run ends (the prober is a process of its own).
  let probe: ReturnType<typeof probeHealth> | undefined;
  try {
    const api = await login(herald.url);
    const abuser = { email: 'abuser@example.com', password: 'abuser-password-1' };
    await api.request('POST', '/admin/users', { ...abuser, role: 'admin', tenant: 'abuser' });
    const abuse = (await login(herald.url, abuser)).auth;
    await fetch(`${herald.url}/templates`, {
      method: 'POST',
      headers: { ...abuse, 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'heavy', channel: 'sms', text: HEAVY }),
    });
    const filled = await fillBacklog(api, s.backlog, 'LOW', 'abuse backlog');
    progress(
      `abuse: ${filled.count.toLocaleString('en-US')} LOW queued; abuse and CRITICAL for ${s.forMs} ms`,
    );
    const during = s.forMs + 2000;
    const paced = (headers: Record<string, string>, path: string, body: string, everyMs: number) =>
      runPaced({ url: herald.url, path, headers, body, everyMs, forMs: during, collect: false });
    const abusers = [
      // Heavy renders (each cut at 100 ms), at NORMAL: LOW and NORMAL keep out of the reserved thread.
      paced(
        abuse,
        '/notifications',
        JSON.stringify({
          channel: 'sms',
          priority: 'NORMAL',
          recipient: { phone: '+15550101234' },
          template: 'heavy',
        }),
        20,
      ),
      paced(abuse, '/templates/heavy/preview', JSON.stringify({ variables: {} }), 50),
      paced(abuse, '/notifications', deepBody, 20),
      paced(api.auth, '/notifications/batch', batch(100, 'LOW'), 100),
    ];
    probe = probeHealth(herald.url, 10);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const criticalBody = { ...notification('CRITICAL'), recipient: { email: 'critical@example.com' } };
    const critical = await runPaced({
      url: herald.url,
      path: '/notifications',
      headers: api.auth,
      body: JSON.stringify(criticalBody),
      everyMs: s.everyMs,
      forMs: s.forMs,
      collect: true,
    });
    const abuseResults = await Promise.all(abusers);
    const { ms: health, failed } = await probe.stop();
    if (failed > 0) throw new Error(`${failed} GET /health probes failed`);
    const latencies = await criticalLatencies(api, critical);
    const over100 = latencies.values.filter((v) => v > 100).length;
    // Where a CRITICAL's time goes besides the claim: its 201, and its SMTP transaction (the
    // provider call, PROCESSING to SENT) on the same event loop, for the first 300.
    const responses = critical.accepted.map((c) => c.responseMs);
    const sendMs: number[] = [];
    for (const c of critical.accepted.slice(0, 300)) {
      const view = await getNotification(api, c.id);
      const at = (type: string) => Date.parse(view.events.find((e) => e.type === type)?.at ?? '');
      const ms = at('SENT') - at('PROCESSING');
      if (Number.isFinite(ms)) sendMs.push(ms);
    }
    const [heavy, previews, deep] = abuseResults;
    return [
      measured('abuse', 'CRITICAL p99, acceptance to provider call', percentile(latencies.values, 99), 'ms', {
        target: { bound: 10, better: 'lower', text: '<= 10 ms' },
        note:
          `${latencies.values.length} of ${critical.sent} CRITICAL processed (${latencies.unprocessed} never); ` +
          `p50 ${percentile(latencies.values, 50)} ms; ${filled.count.toLocaleString('en-US')} LOW queued through a ` +
          `2 s/message SMTP server; abuser: ${heavy?.sent ?? 0} heavy-template sends, ${previews?.sent ?? 0} heavy ` +
          `previews, ${deep?.sent ?? 0} 6,000-deep payloads` +
          [...critical.failures].map((f) => `; failure: ${f}`).join(''),
      }),
      measured('abuse', 'CRITICAL over 100 ms', over100, '', {
        target: { bound: 0, better: 'lower', text: '0' },
        note: `max ${Math.max(...latencies.values)} ms`,
      }),
      measured('abuse', 'CRITICAL 201 p99', percentile(responses, 99), 'ms', {
        note: `p50 ${percentile(responses, 50).toFixed(1)} ms`,
      }),
      measured('abuse', 'CRITICAL SMTP transaction p50 (PROCESSING to SENT)', percentile(sendMs, 50), 'ms', {
        note: `p99 ${percentile(sendMs, 99)} ms, of ${sendMs.length}; CRITICAL may use 16 of the 32 connections`,
      }),
      measured('abuse', 'GET /health p99 throughout', percentile(health, 99), 'ms', {
        target: { bound: 10, better: 'lower', text: '<= 10 ms' },
        note: `${health.length} probes, max ${Math.round(Math.max(...health))} ms`,
      }),
    ];
  } finally {
    await probe?.stop().catch(() => undefined);
    await herald.stop();
    await smtp.close();
  }
}

export const abuseScenario: Scenario = {
  name: 'abuse',
  title: 'Isolation under abuse: slow LOW provider, heavy templates, bad payloads, CRITICAL every 10 ms',
  run,
};
