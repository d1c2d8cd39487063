// #49.19: an SMTP server that refuses connections (a real closed port) is logged once, at warn,
// with the provider's name, however many messages fail; its recovery once, at info.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { emailProviderFactories } from '../../src/providers/email/index.ts';
import { startSmtpPeer } from '../helpers/peers/smtp.ts';
import { portOutsideEphemeralRange } from '../helpers/ports.ts';
import { newNotification, read, seedMany } from '../store/queue-fixtures.ts';
import { closeProviders, schedulerFor, settle, setup } from './harness.ts';

/** Short circuits (two failures open it for 1 s), so the clock moves past them by hand. */
const circuit = { failureThreshold: 2, openMs: 1000, maxOpenMs: 4000, configPauseMs: 60_000 };

describe('the provider health log', () => {
  const closers: Array<() => Promise<void>> = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('warns once when SMTP refuses connections and says once, at info, that it works again', async () => {
    const port = await portOutsideEphemeralRange(); // nothing listens: connections are refused
    const env = await setup('sqlite', {
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      EMAIL_FROM: 'Herald <noreply@mail.example.com>',
      HERALD_RETRY_MAX_ATTEMPTS: '20',
    });
    closers.push(() => env.store.close());
    env.clock.set(Date.now());
    const lines: Array<{ level: string; obj: object; msg?: string }> = [];
    const log = {
      info: (obj: object, msg?: string) => lines.push({ level: 'info', obj, msg }),
      warn: (obj: object, msg?: string) => lines.push({ level: 'warn', obj, msg }),
      error: (obj: object, msg?: string) => lines.push({ level: 'error', obj, msg }),
    };
    const scheduler = schedulerFor(env, { factories: emailProviderFactories, circuit, log });
    closers.push(() => closeProviders(scheduler));
    const health = () => lines.filter((line) => /^provider smtp /.test(line.msg ?? ''));

    const ids = await seedMany(
      env.store,
      Array.from({ length: 4 }, (_, n) =>
        newNotification({
          channel: 'email',
          recipient: { email: `u${n}@example.com` },
          createdAt: env.clock.now(),
        }),
      ),
    );
    // Several attempts fail, over several cycles (the circuit opens, then half-opens, and fails again).
    for (let round = 0; round < 3; round++) {
      await settle(scheduler);
      env.clock.advance(60_000);
    }
    const failed = await read(env.store, ids[0] as string);
    assert.ok(failed.events.filter((e) => e.type === 'ATTEMPT_FAILED').length >= 2, 'attempts failed');
    assert.equal(health().length, 1, JSON.stringify(health()));
    const [warn] = health();
    assert.equal(warn?.level, 'warn');
    assert.match(warn?.msg ?? '', /^provider smtp is failing: .*ECONNREFUSED/);
    assert.deepEqual(Object.keys(warn?.obj ?? {}).sort(), ['detail', 'provider']);

    // The SMTP server comes up on that port: the next sends succeed, and that is said once.
    const peer = await startSmtpPeer({ port });
    closers.push(() => peer.close());
    for (let round = 0; round < 3; round++) {
      env.clock.advance(10 * 60_000);
      await settle(scheduler);
    }
    for (const id of ids) assert.equal((await read(env.store, id as string)).record.status, 'SENT');
    assert.deepEqual(
      health().map((line) => `${line.level} ${line.msg?.replace(/: .*/, '')}`),
      ['warn provider smtp is failing', 'info provider smtp works again'],
    );
  });
});
