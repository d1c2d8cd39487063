/**
 * `node --import tsx bench/critical-cpu.ts [count] [inFlight]`: Herald's CPU per CRITICAL
 * notification on the CRITICAL path, by thread (#48; docs/scale-out.md, "What a notification
 * costs"): `npm start`'s layout on SQLite (one process), `count` CRITICAL accepted one request
 * each, `inFlight` at a time, and delivered to the sandbox with a status callback (DELIVERED) to
 * a receiver in this process; from the first request to the last callback's receipt, each
 * thread's time on a CPU over `count` (os-thread.ts names them: main is the API's, dispatch
 * commits the rows and claims, sends and completes them, sender posts the callbacks, other is
 * libuv's pool and V8's compiler and collector threads). The sender thread is started and warm
 * before the run.
 */
import { notification } from './lib/bodies.ts';
import { receiverEnv, startReceiver } from './lib/callback-receiver.ts';
import { deploy } from './lib/deploy.ts';
import { watchDrain } from './lib/drain.ts';
import { cpuByThread, perThreadShare, runScript, threadTimesOf } from './lib/proc.ts';

const [count = 5000, inFlight = 4] = process.argv.slice(2).map(Number);

async function main() {
  const receiver = await startReceiver();
  const herald = await deploy('sqlite', { env: receiverEnv(receiver) });
  try {
    const { api } = herald;
    const pid = herald.processes[0]?.pid as number;
    const created = await api.request('POST', '/callbacks', { url: receiver.url, events: ['DELIVERED'] });
    if (created.status !== 201) throw new Error(`POST /callbacks: ${created.status}`);
    const send = async () => {
      const answer = await api.request('POST', '/notifications', notification('CRITICAL'));
      if (answer.status !== 201) throw new Error(`POST /notifications: ${answer.status}`);
    };
    // Warm: the sender thread started and every path run once.
    for (let i = 0; i < 50; i++) await send();
    while (receiver.lags.length < 50) await new Promise((r) => setTimeout(r, 50));
    await watchDrain(api, 60_000, 'critical-cpu warm-up');
    const before = { threads: cpuByThread(pid), all: threadTimesOf(pid), at: performance.now() };
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next++ < count) await send();
      }),
    );
    const deadline = Date.now() + Math.max(60_000, count * 10);
    while (receiver.lags.length < 50 + count && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    if (receiver.lags.length < 50 + count)
      throw new Error(`${50 + count - receiver.lags.length} callbacks missing`);
    const seconds = (performance.now() - before.at) / 1000;
    const share = perThreadShare(before.threads, cpuByThread(pid), count);
    const all = ((threadTimesOf(pid).runMs - before.all.runMs) * 1000) / count;
    const rows = Object.entries(share)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, us]) => `${name} ${us.toFixed(1)}`)
      .join(', ');
    process.stdout.write(
      `${count} CRITICAL, ${inFlight} in flight, ${(count / seconds).toFixed(0)}/s: Herald's CPU ${all.toFixed(1)} µs a notification (${rows})\n`,
    );
  } finally {
    await herald.stop();
    await receiver.close();
  }
}

runScript(main);
