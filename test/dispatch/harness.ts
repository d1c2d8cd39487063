import { manualClock } from '../../src/clock.ts';
import type { Config } from '../../src/config/config.ts';
import type { CircuitOptions } from '../../src/dispatch/circuit.ts';
import { createScheduler, type Scheduler } from '../../src/dispatch/scheduler.ts';
import { createProviderRegistry, type ProviderFactory } from '../../src/providers/registry.ts';
import type { OutgoingMessage, Provider, SendResult } from '../../src/providers/types.ts';
import type { Store } from '../../src/store/port/index.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { createRenderer } from '../../src/templates/render.ts';
import { testConfig } from '../helpers/config.ts';
import { T0 } from '../store/queue-fixtures.ts';

export const quiet = { info() {}, warn() {}, error() {} };

/** A store on a fresh temp dir, a manual clock at T0 + 1 s, and the test config. */
export function setup(env: Record<string, string> = {}) {
  const config = testConfig(env);
  const store = createSqliteStore(config.dataDir);
  const clock = manualClock(T0 + 1000);
  return { config, store, clock };
}

export interface WorkerOptions {
  owner?: string;
  factories?: ProviderFactory[];
  dispatch?: Partial<Config['dispatch']>;
  circuit?: CircuitOptions;
  random?: () => number;
}

/** A scheduler on the harness's store and clock; real providers from `factories`, else the sandbox. */
export function schedulerFor(
  env: { config: Config; store: Store; clock: ReturnType<typeof setup>['clock'] },
  options: WorkerOptions = {},
): Scheduler {
  const { config, store, clock } = env;
  const providers = createProviderRegistry(
    { config, clock, reports: { report: async () => {} }, log: quiet },
    options.factories ?? [],
  );
  return createScheduler({
    store,
    providers,
    renderer: createRenderer(store),
    clock,
    config: { ...config.dispatch, ...options.dispatch },
    log: quiet,
    owner: options.owner ?? 'w1',
    random: options.random ?? (() => 0.5),
    circuit: options.circuit,
  });
}

/** A provider the test scripts: `answer` decides each send; every call is recorded. */
export function scriptedProvider(
  channel: Provider['channel'],
  answer: (message: OutgoingMessage, signal: AbortSignal) => SendResult | Promise<SendResult>,
  name = 'scripted',
): Provider & { calls: OutgoingMessage[] } {
  const calls: OutgoingMessage[] = [];
  return {
    name,
    channel,
    limits: { concurrency: 1000, ratePerSecond: 1_000_000, burst: 1_000_000 },
    calls,
    accepts: () => true,
    async send(message, signal) {
      calls.push(message);
      return answer(message, signal);
    },
  };
}

/** Ticks until a step claims nothing and nothing is in flight (bounded). */
export async function drain(scheduler: Scheduler, max = 1000): Promise<void> {
  for (let i = 0; i < max; i++) {
    const result = await scheduler.tick();
    if (result.claimed.length === 0 && scheduler.inFlight() === 0 && scheduler.pending() === 0) return;
  }
  throw new Error('scheduler did not drain');
}
