/**
 * `node --import tsx bench/poster-cpu.ts [count] [inFlight] [rounds] [waves]`: the callback poster
 * alone (src/callbacks/post.ts, signing included): `count` posts to the bench's HTTPS receiver (a
 * process of its own), `inFlight` at once, each answer starting the next as the sender's slots do
 * (or with `waves` 1, `inFlight` started in one tick once the last of the previous ones has
 * answered, as a pass at a steady rate does); this thread's CPU a post, from
 * /proc/self/task/<tid>/schedstat.
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPoster } from '../src/callbacks/post.ts';
import { newSecret } from '../src/callbacks/signing.ts';
import { startReceiver } from './lib/callback-receiver.ts';

const FIXTURES = join(import.meta.dirname, '../test/fixtures/push');

if (process.argv[2] === 'receiver') {
  const receiver = await startReceiver();
  process.send?.({ url: receiver.url, host: receiver.host });
} else {
  const [count = 50_000, inFlight = 32, rounds = 3, waves = 0] = process.argv.slice(2).map(Number);
  if (!process.env.NODE_EXTRA_CA_CERTS)
    throw new Error(`set NODE_EXTRA_CA_CERTS=${join(FIXTURES, 'ca.pem')}`);
  const child = fork(import.meta.filename, ['receiver'], { execArgv: ['--import', 'tsx'] });
  const { url, host } = await new Promise<{ url: string; host: string }>((r) => child.once('message', r));
  const cpuMs = () =>
    Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  const body = JSON.stringify({
    type: 'notification.status',
    timestamp: new Date().toISOString(),
    data: {
      notificationId: '01JD0000000000000000000000',
      status: 'DELIVERED',
      previousStatus: 'SENT',
      event: { type: 'DELIVERED', at: new Date().toISOString(), provider: 'sandbox', source: 'provider' },
      metadata: { order: 'A-1' },
    },
  });
  const poster = createPoster([host], 10_000, inFlight);
  const secrets = [newSecret()];
  for (let round = 0; round <= rounds; round++) {
    let started = 0;
    let failed = 0;
    const before = cpuMs();
    const at = performance.now();
    await new Promise<void>((done) => {
      let finished = 0;
      let deferred = 0;
      const one = () => {
        const i = started++;
        poster
          .post({
            url,
            messageId: `msg_${i}`,
            timestamp: Math.floor(Date.now() / 1000),
            secrets,
            body,
            callbackId: 'cb_1',
          })
          .then((answer) => {
            if (answer.statusCode !== 204) failed++;
            finished++;
            if (finished === count) done();
            else if (waves === 2 && started < count) {
              // Deferred: the answers of one turn of the event loop start their successors together.
              if (deferred++ === 0)
                setImmediate(() => {
                  for (; deferred > 0 && started < count; deferred--) one();
                  deferred = 0;
                });
            } else if (!waves && started < count) one();
            else if (waves && finished === started)
              for (let j = 0; j < inFlight && started < count; j++) one();
          });
      };
      for (let i = 0; i < Math.min(inFlight, count); i++) one();
    });
    const us = ((cpuMs() - before) * 1000) / count;
    if (round > 0)
      process.stdout.write(
        `round ${round}: ${us.toFixed(2)} µs of this thread a post, ${Math.round(count / ((performance.now() - at) / 1000))}/s, ${failed} failed\n`,
      );
  }
  await poster.close();
  child.kill();
}
