/**
 * `node --import tsx bench/callback-cpu.ts [count] [rounds]`: Herald's CPU per status callback,
 * all threads (#48), alone: the callbacks scenario's drain of `count` NORMAL to the sandbox on
 * `npm start`'s layout without a callback and with one (DELIVERED), in turn, `rounds` times; each
 * round's difference is one callback's CPU. Each round also prints the difference by thread
 * (main, dispatch, sender, other) and each drain's wall time: a thread that polls is billed per
 * wall second, so its share grows with the drain's length, and the load. The callbacks scenario
 * reports the same figure among its others, in a run many times longer.
 */
import { runScript } from './lib/proc.ts';
import { median } from './lib/stats.ts';
import { drain } from './scenarios/callbacks.ts';

const [count = 30_000, rounds = 3] = process.argv.slice(2).map(Number);

/** "main 12.3, dispatch 4.5, ...": µs a notification by thread. */
const byThread = (share: Record<string, number>) =>
  Object.entries(share)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, us]) => `${name} ${us.toFixed(1)}`)
    .join(', ');

async function main() {
  const each: number[] = [];
  const threads: Record<string, number[]> = {};
  for (let i = 0; i < rounds; i++) {
    const without = await drain(count, 0, false);
    const withOne = await drain(count, 0, true);
    each.push(withOne.cpu.herald - without.cpu.herald);
    const difference: Record<string, number> = {};
    for (const name of new Set([
      ...Object.keys(without.heraldThreads),
      ...Object.keys(withOne.heraldThreads),
    ]))
      difference[name] = (withOne.heraldThreads[name] ?? 0) - (without.heraldThreads[name] ?? 0);
    for (const [name, us] of Object.entries(difference)) threads[name] = [...(threads[name] ?? []), us];
    process.stdout.write(
      `round ${i + 1}: ${without.cpu.herald.toFixed(1)} µs a notification without (${(without.wallMs / 1000).toFixed(1)} s), ${withOne.cpu.herald.toFixed(1)} with one callback (${(withOne.wallMs / 1000).toFixed(1)} s): ${(withOne.cpu.herald - without.cpu.herald).toFixed(1)} µs a callback\n` +
        `  without, by thread: ${byThread(without.heraldThreads)}\n` +
        `  with one, by thread: ${byThread(withOne.heraldThreads)}\n` +
        `  a callback, by thread: ${byThread(difference)}\n`,
    );
  }
  const medians = Object.fromEntries(Object.entries(threads).map(([name, us]) => [name, median(us)]));
  process.stdout.write(
    `Herald's CPU per status callback, all threads: median ${median(each).toFixed(1)} µs (by thread, medians: ${byThread(medians)})\n`,
  );
}

runScript(main);
