import { after } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import type { Config } from '../../src/config/config.ts';
import type { CircuitOptions } from '../../src/dispatch/circuit.ts';
import {
  createScheduler,
  type Scheduler,
  type SchedulerDeps,
  type StepResult,
} from '../../src/dispatch/scheduler.ts';
import { createProviderRegistry, type ProviderFactory } from '../../src/providers/registry.ts';
import type { OutgoingMessage, Provider, SendResult } from '../../src/providers/types.ts';
import type { Store } from '../../src/store/port/index.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { createRenderer, type Renderer } from '../../src/templates/render.ts';
import { testConfig } from '../helpers/config.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';
import { T0 } from '../store/queue-fixtures.ts';

export const quiet = { info() {}, warn() {}, error() {} };

/** The databases the scheduler's behaviour tests run on (kysely style: every test, every dialect). */
export type StoreKind = 'sqlite' | 'postgres';

/** A clock tests move by hand. */
type ManualClock = ReturnType<typeof manualClock>;

let postgresUsed = false;

/**
 * The store kinds to run a file's suites on. Call it at the top level of a test file: it also
 * stops the file's shared PostgreSQL server once every suite has run.
 */
export function storeKinds(): StoreKind[] {
  after(async () => {
    if (postgresUsed) await stopSharedPostgres();
  });
  return ['sqlite', 'postgres'];
}

let template: Promise<string> | undefined;

/** A fresh PostgreSQL database, copied from a migrated template (far faster than migrating each). */
async function openPostgres(): Promise<Store> {
  postgresUsed = true;
  const server = await sharedPostgres();
  template ??= server.createDatabase('herald_dispatch_template').then(async (url) => {
    await (await createPostgresStore(url)).close();
    return new URL(url).pathname.slice(1);
  });
  const url = await server.createDatabase('herald_dispatch', await template);
  return createPostgresStore(url, { max: 4 });
}

/** A store of `kind` on a fresh database, a manual clock at T0 + 1 s, and the test config. */
export async function setup(kind: StoreKind = 'sqlite', env: Record<string, string> = {}) {
  // The scheduler tests drive retries and circuits through the sandbox's failure injection.
  const config = testConfig({ HERALD_SANDBOX_FAILURES: 'true', ...env });
  const store = kind === 'sqlite' ? createSqliteStore(config.dataDir) : await openPostgres();
  const clock = manualClock(T0 + 1000);
  return { config, store, clock };
}

export interface WorkerOptions {
  owner?: string;
  factories?: ProviderFactory[];
  dispatch?: Partial<Config['dispatch']>;
  circuit?: CircuitOptions;
  random?: () => number;
  /** The renderer, when not one on the harness's store. */
  renderer?: Renderer;
  /** The worker's log (default: quiet). */
  log?: SchedulerDeps['log'];
  /** Steps leave CRITICAL and HIGH to the urgent lane, as the worker's loop on PostgreSQL does. */
  urgentInLane?: boolean;
  /** Whether urgent work arrived lately (start.ts watches the wake-up on SQLite). */
  urgentWindow?: SchedulerDeps['urgentWindow'];
}

/** A scheduler on the harness's store and clock; real providers from `factories`, else the sandbox. */
export function schedulerFor(
  env: { config: Config; store: Store; clock: ManualClock },
  options: WorkerOptions = {},
): Scheduler {
  const { config, store, clock } = env;
  const providers = createProviderRegistry(
    { config, clock, reports: { report: async () => {} }, log: quiet },
    options.factories ?? [],
  );
  const renderer = trackedRenderer(options.renderer ?? createRenderer(store));
  const scheduler = createScheduler({
    store,
    providers,
    renderer,
    clock,
    config: { ...config.dispatch, ...options.dispatch },
    log: options.log ?? quiet,
    owner: options.owner ?? 'w1',
    random: options.random ?? (() => 0.5),
    circuit: options.circuit,
    urgentInLane: options.urgentInLane,
    urgentWindow: options.urgentWindow,
  });
  renders.set(scheduler, renderer);
  registries.set(scheduler, providers);
  return scheduler;
}

/**
 * Steps a scheduler on real peers until nothing is claimed, promoted, in flight or waiting to be
 * written (a retry due at once is promoted and claimed in the next steps).
 */
export async function settle(scheduler: Scheduler): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    // The urgent lane writes CRITICAL and HIGH completions beside the steps: once nothing is in
    // flight, wait for it, so that the step sees what it wrote (a retry due at once). Settled
    // means a step that began with nothing in flight or unwritten found nothing to do.
    if (scheduler.inFlight() === 0) await scheduler.drained();
    const quiet = scheduler.inFlight() === 0 && scheduler.pending() === 0;
    const result = await scheduler.step();
    const idle = result.claimed.length === 0 && result.promoted === 0;
    if (quiet && idle && scheduler.inFlight() === 0 && scheduler.pending() === 0) return;
    await scheduler.settled(20);
  }
  throw new Error('scheduler did not settle');
}

const registries = new WeakMap<Scheduler, { close(): Promise<void> }>();

/** Closes the providers a scheduler of schedulerFor was built with (their pools and sessions). */
export async function closeProviders(scheduler: Scheduler): Promise<void> {
  await registries.get(scheduler)?.close();
}

/** Renders in progress per scheduler: rendering runs in worker threads, so a tick waits for it. */
const renders = new WeakMap<Scheduler, { idle(): Promise<void> }>();

/** A renderer that knows when none of its renders is running. */
function trackedRenderer(inner: Renderer): Renderer & { idle(): Promise<void> } {
  const pending = new Set<Promise<unknown>>();
  return {
    ...inner,
    render(n) {
      const rendering = inner.render(n);
      pending.add(rendering);
      const done = () => pending.delete(rendering);
      rendering.then(done, done);
      return rendering;
    },
    async idle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
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

/**
 * One step, a pause for sends that answer at once (the sandbox, scripted providers), then a step
 * that writes their completions: what the worker loop does in one turn, without its waits.
 */
export async function tick(scheduler: Scheduler): Promise<StepResult> {
  const result = await scheduler.step(true);
  await renders.get(scheduler)?.idle();
  await new Promise((resolve) => setImmediate(resolve));
  if (scheduler.pending() > 0) await scheduler.step(false);
  return result;
}

/** Ticks until a step claims nothing and nothing is in flight (bounded). */
export async function drain(scheduler: Scheduler, max = 1000): Promise<void> {
  for (let i = 0; i < max; i++) {
    const result = await tick(scheduler);
    if (result.claimed.length === 0 && scheduler.inFlight() === 0 && scheduler.pending() === 0) return;
  }
  throw new Error('scheduler did not drain');
}

/** What `setup` gives a test. */
export type Env = Awaited<ReturnType<typeof setup>>;

/**
 * A `setup` for one suite on `kind` whose stores are closed after the suite. Call it inside the
 * suite's describe.
 */
export function suiteStores(kind: StoreKind): (env?: Record<string, string>) => Promise<Env> {
  const envs: Env[] = [];
  after(async () => {
    for (const e of envs) await e.store.close();
  });
  return async (env = {}) => {
    const e = await setup(kind, env);
    envs.push(e);
    return e;
  };
}
