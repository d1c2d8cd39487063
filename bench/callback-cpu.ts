/**
 * `node --import tsx bench/callback-cpu.ts [count] [rounds]`: Herald's CPU per status callback,
 * all threads (#48), alone: the callbacks scenario's drain of `count` NORMAL to the sandbox on
 * `npm start`'s layout without a callback and with one (DELIVERED), in turn, `rounds` times; each
 * round's difference is one callback's CPU. The callbacks scenario reports the same figure among
 * its others, in a run many times longer.
 */
import { runScript } from './lib/proc.ts';
import { median } from './lib/stats.ts';
import { drain } from './scenarios/callbacks.ts';

const [count = 30_000, rounds = 3] = process.argv.slice(2).map(Number);

async function main() {
  const each: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const without = await drain(count, 0, false);
    const withOne = await drain(count, 0, true);
    each.push(withOne.cpu.herald - without.cpu.herald);
    process.stdout.write(
      `round ${i + 1}: ${without.cpu.herald.toFixed(1)} µs a notification without, ${withOne.cpu.herald.toFixed(1)} with one callback: ${(withOne.cpu.herald - without.cpu.herald).toFixed(1)} µs a callback\n`,
    );
  }
  process.stdout.write(
    `Herald's CPU per status callback, all threads: median ${median(each).toFixed(1)} µs\n`,
  );
}

runScript(main);
