/**
 * `node --import tsx bench/callback-cpu.ts [perSecond] [seconds] [rounds]`: Herald's CPU per
 * status callback, all threads (#48), alone: `npm start`'s layout accepting `perSecond` NORMAL
 * (batches of 100) for `seconds` after a warm-up, without a callback and with one (DELIVERED), in
 * turn, `rounds` times, each read over a window of the same length (bench/lib/callback-cpu.ts).
 * The callbacks scenario reports the same figure among its others.
 */
import { byThread, callbackCpu, medianOf } from './lib/callback-cpu.ts';
import { runScript } from './lib/proc.ts';

const [perSecond = 3000, seconds = 10, rounds = 2] = process.argv.slice(2).map(Number);

async function main() {
  const each = await callbackCpu({ perSecond, forMs: seconds * 1000, warmMs: 3000 }, rounds);
  for (const [i, r] of each.entries())
    process.stdout.write(
      `round ${i + 1}: ${r.without.toFixed(1)} µs a notification without, ${r.with.toFixed(1)} with one callback (${r.accepted.toLocaleString('en-US')} in the window): ${r.perCallback.toFixed(1)} µs a callback (${byThread(r.threads)}); ${r.writes.toFixed(2)} write calls a callback\n`,
    );
  const { all, threads } = medianOf(each);
  process.stdout.write(
    `Herald's CPU per status callback, all threads: median ${all.toFixed(1)} µs (by thread, medians: ${byThread(threads)})\n`,
  );
}

runScript(main);
