import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import type { Metrics } from '../metrics.ts';
import { CHANNELS, type Channel, priorityRank } from '../notifications/model.ts';
import type { Completion } from '../notifications/status.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { ProviderDeps } from '../providers/types.ts';
import type { Store } from '../store/port/index.ts';
import type { ClaimBudget, CycleResult } from '../store/port/queue.ts';
import type { Renderer } from '../templates/render.ts';
import { DEFAULT_SHARES, priorityBudget, type SlotShares } from './budget.ts';
import type { CircuitOptions } from './circuit.ts';
import { type DeliverDeps, deliver, type Flight } from './deliver.ts';
import { followUp } from './follow-up.ts';
import { createProviderHealthLog } from './provider-health.ts';
import { createProviderStates } from './provider-state.ts';
import { createSharedLimits } from './shared-limits.ts';

/** What a scheduler is built from (house style: plain arguments, no container). */
export interface SchedulerDeps {
  store: Store;
  providers: ProviderRegistry;
  renderer: Renderer;
  clock: Clock;
  config: Config['dispatch'];
  log: ProviderDeps['log'];
  /** Lease owner; distinct per worker (several may run in one process). */
  owner?: string;
  random?: () => number;
  /** Circuit tuning; config.circuit unless a test shortens it. */
  circuit?: CircuitOptions;
  shares?: SlotShares;
  metrics?: Metrics;
  /** The one-click unsubscribe link of a LOW email (absent: LOW email carries none). */
  unsubscribeUrl?: DeliverDeps['unsubscribeUrl'];
  /** Told after each step that changed a notification's status (its events are committed). */
  onStatusChanged?: () => void;
}

/** One scheduler step's outcome, for tests and the run loop. */
export type StepResult = CycleResult;

/**
 * The dispatch engine of one worker, steppable: `step()` writes finished completions, promotes,
 * reaps and claims in one transaction, then starts the sends of what it claimed. The run loop
 * (worker.ts) calls it; tests step it with a manual clock.
 */
export interface Scheduler {
  readonly owner: string;
  /** One cycle; `claim: false` only writes completions (and promotes/reaps). */
  step(claim?: boolean): Promise<StepResult>;
  /** Sends in progress. */
  inFlight(): number;
  /** Completions waiting for the next step. */
  pending(): number;
  /** The earliest due time of a waiting row seen by the last step. */
  nextDueAt(): number | null;
  /** Resolves when a send finishes (so the loop can write it), after `ms`, or when `signal` aborts. */
  settled(ms: number, signal?: AbortSignal): Promise<void>;
  /** Resolves when every current send has finished. */
  drained(): Promise<void>;
  /** Renews the leases of sends running longer than a third of the lease; aborts overdue ones. */
  maintainLeases(): Promise<void>;
  /** Shutdown: aborts every send; a failed (aborted) one completes as a hold, not a retry. */
  releaseAll(): void;
}

export function createScheduler(deps: SchedulerDeps): Scheduler {
  const { store, clock, config } = deps;
  const owner = deps.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  // Scale-out: in a store that several processes share, provider rate limits and circuits are
  // shared by every worker.
  const shared = store.capabilities.sharedByProcesses
    ? createSharedLimits(store.limits, clock, config.claimBatch)
    : undefined;
  const states = createProviderStates(deps.providers, clock, deps.circuit ?? config.circuit, shared);
  const deliverDeps: DeliverDeps = {
    unsubscribeUrl: deps.unsubscribeUrl,
    providers: deps.providers,
    states,
    renderer: deps.renderer,
    clock,
    policy: config,
    random: deps.random ?? Math.random,
    metrics: deps.metrics,
    health: createProviderHealthLog(deps.log),
  };
  const flights = new Map<number, Flight & { done: Promise<void> }>();
  const counts: [number, number, number, number] = [0, 0, 0, 0];
  let buffer: Completion[] = [];
  let backlog: boolean[] = [false, false, false, false];
  let nextDue: number | null = null;
  let lastLeaseCheck = clock.now();
  let wake: (() => void) | undefined;

  function budget(): ClaimBudget {
    const batch = config.claimBatch;
    const slots = priorityBudget(config.concurrency, counts, backlog, deps.shares ?? DEFAULT_SHARES);
    const perChannel = slots.perPriority.map((_, rank) => {
      const room: Partial<Record<Channel, number>> = {};
      for (const channel of CHANNELS) room[channel] = states.channelCapacity(channel, rank, batch);
      return room;
    });
    return {
      // LOW is claimed in quarter batches: a step busy with bulk stays short (~2 ms), so a
      // CRITICAL committed meanwhile waits for little before the next step claims it.
      perPriority: slots.perPriority.map((n, rank) => Math.min(n, rank === 3 ? Math.ceil(batch / 4) : batch)),
      sharedLimit: Math.min(slots.sharedLimit, batch),
      perChannel,
    };
  }

  /** Each send may listen for the abort, so the step's signal takes as many listeners as it has sends. */
  function stepController(): AbortController {
    const controller = new AbortController();
    setMaxListeners(0, controller.signal);
    return controller;
  }

  function launch(flight: Flight): void {
    const rank = priorityRank(flight.record.priority);
    counts[rank] = (counts[rank] ?? 0) + 1;
    const done = deliver(deliverDeps, flight).then(
      (completion) => {
        counts[rank] = (counts[rank] ?? 1) - 1;
        flights.delete(flight.record.seq);
        buffer.push(completion);
        wake?.();
      },
      (error: unknown) => {
        // deliver() maps every outcome to a completion; this is a bug, so keep the worker sane:
        // give the notification back shortly instead of leaving it leased until the reaper.
        deps.log.error({ err: error, seq: flight.record.seq }, 'delivery crashed');
        counts[rank] = (counts[rank] ?? 1) - 1;
        flights.delete(flight.record.seq);
        const { seq, attempts } = flight.record;
        buffer.push({
          seq,
          attempt: attempts,
          kind: 'hold',
          until: clock.now() + 1000,
          detail: 'internal error',
          repeat: flight.record.holds > 0,
        });
        wake?.();
      },
    );
    flights.set(flight.record.seq, Object.assign(flight, { done }));
  }

  const scheduler: Scheduler = {
    owner,
    async step(claim = true) {
      // Top up the shared-limit pools before the budget reads them (a no-op without sharing).
      if (claim) await shared?.sync();
      const now = clock.now();
      const completions = buffer;
      buffer = [];
      let result: CycleResult;
      try {
        result = await store.queue.cycle({
          owner,
          now,
          leaseUntil: now + config.leaseMs,
          completions,
          claim: claim ? budget() : undefined,
          maxAttempts: config.retryMaxAttempts,
        });
      } catch (error) {
        buffer = completions.concat(buffer); // keep them for the next try
        throw error;
      }
      backlog = result.backlog;
      nextDue = result.nextDueAt;
      // One controller for the step's sends: they start at the same moment, so the lease timeout
      // ends them together, and shutdown ends them all. A controller each was 3.5% of the dispatch
      // thread's time at 15,000 sends a second (a CPU profile of the dispatch bench).
      if (result.claimed.length > 0) {
        const controller = stepController();
        for (const record of result.claimed) launch({ record, controller, startedAt: now, released: false });
      }
      if (completions.length > 0) await followUp(store, completions, result.stale, now, deps.log);
      if (result.applied + result.claimed.length + result.expired + result.suppressed + result.reaped > 0)
        deps.onStatusChanged?.();
      return result;
    },
    inFlight: () => flights.size,
    pending: () => buffer.length,
    nextDueAt: () => nextDue,
    settled(ms, signal) {
      if (buffer.length > 0) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(finish, ms);
        function finish() {
          clearTimeout(timer);
          if (wake === finish) wake = undefined;
          signal?.removeEventListener('abort', finish);
          resolve();
        }
        wake = finish;
        signal?.addEventListener('abort', finish, { once: true });
      });
    },
    async drained() {
      while (flights.size > 0) await Promise.all([...flights.values()].map((f) => f.done));
    },
    async maintainLeases() {
      const now = clock.now();
      const third = Math.floor(config.leaseMs / 3);
      if (now - lastLeaseCheck < Math.min(third, 1000)) return;
      lastLeaseCheck = now;
      const old = [...flights.values()].filter((f) => now - f.startedAt >= third);
      if (old.length === 0) return;
      // Renewal keeps a slow send's lease, but a send that hangs must end some time: abort it
      // (a transient failure, retried) after the lease or 30 s, whichever is longer.
      const timeout = Math.max(config.leaseMs, 30_000);
      for (const f of old) if (now - f.startedAt >= timeout) f.controller.abort();
      const leases = old.map((f) => ({ seq: f.record.seq, attempt: f.record.attempts }));
      await store.queue.renew(owner, leases, now + config.leaseMs);
    },
    releaseAll() {
      for (const flight of flights.values()) {
        flight.released = true;
        flight.controller.abort();
      }
    },
  };
  return scheduler;
}
