import { parseArgs } from 'node:util';
import { queuesView } from '../dispatch/queues-view.ts';
import { CHANNELS, type Channel, PRIORITIES, type Priority, priorityRank } from '../notifications/model.ts';
import { row, runCli } from './support.ts';

export const QUEUES_HELP = `Usage: herald queues [list] | pause|resume [--priority CRITICAL|HIGH|NORMAL|LOW] [--channel email|sms|push]

Examples:
  herald queues                             (the queues, their depth and pauses)
  herald queues pause --priority LOW        (hold newsletters; every worker stops claiming them)
  herald queues resume --priority LOW`;

/**
 * `herald queues pause|resume [--priority P] [--channel C]`: writes the pause to the database,
 * where every worker reads it on its next claim (running workers included), then prints the
 * queues. Without a subcommand (or with `list`), only prints them.
 */
export async function runQueues(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    console.error(`${(error as Error).message}\n${QUEUES_HELP}`);
    return 2;
  }
  return runCli(env, QUEUES_HELP, async ({ store, clock, out }) => {
    if (parsed.action !== 'list') {
      const selector = {
        priority: parsed.priority === undefined ? undefined : priorityRank(parsed.priority),
        channel: parsed.channel,
      };
      await store.queue.setPaused(selector, parsed.action === 'pause', clock.now());
    }
    const { queues } = await queuesView(store, clock.now());
    const widths = [9, 8, 9, 12, 9, 6];
    out(row(['priority', 'channel', 'depth', 'oldestAgeMs', 'inFlight', 'paused'], widths));
    for (const q of queues) {
      const age = q.oldestAgeMs === null ? '-' : String(q.oldestAgeMs);
      out(row([q.priority, q.channel, String(q.depth), age, String(q.inFlight), String(q.paused)], widths));
    }
    return 0;
  });
}

function parse(args: string[]): {
  action: 'pause' | 'resume' | 'list';
  priority?: Priority;
  channel?: Channel;
} {
  const { values, positionals } = parseArgs({
    args,
    options: { priority: { type: 'string' }, channel: { type: 'string' } },
    allowPositionals: true,
  });
  const action = positionals[0] ?? 'list';
  if (positionals.length > 1 || !['pause', 'resume', 'list'].includes(action)) {
    throw new Error(`Unknown queues command "${positionals.join(' ')}".`);
  }
  const priority = values.priority?.toUpperCase();
  if (priority !== undefined && !(PRIORITIES as readonly string[]).includes(priority)) {
    throw new Error(`--priority must be one of ${PRIORITIES.join(', ')}.`);
  }
  if (values.channel !== undefined && !(CHANNELS as readonly string[]).includes(values.channel)) {
    throw new Error(`--channel must be one of ${CHANNELS.join(', ')}.`);
  }
  return {
    action: action as 'pause' | 'resume' | 'list',
    priority: priority as Priority | undefined,
    channel: values.channel as Channel | undefined,
  };
}
