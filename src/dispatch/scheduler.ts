import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import type { Metrics } from '../metrics.ts';
import { CHANNELS, type Channel, PRIORITIES, type Priority, priorityRank } from '../notifications/model.ts';
import type { Completion } from '../notifications/status.ts';
import { isUrgent } from '../notifications/wakeup.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { ProviderDeps } from '../providers/types.ts';
import type { Store } from '../store/port/index.ts';
import type { ClaimBudget, CycleInput, CycleResult } from '../store/port/queue.ts';
import type { Renderer } from '../templates/render.ts';
import { DEFAULT_SHARES, priorityBudget, type SlotShares } from './budget.ts';
import type { CircuitOptions } from './circuit.ts';
import { type DeliverDeps, deliver, type Flight } from './deliver.ts';
import { deliverToInbox } from './deliver-inbox.ts';
import { deliverToTargets } from './deliver-targets.ts';
import { followUp } from './follow-up.ts';
import { createProviderHealthLog } from './provider-health.ts';
import { createProviderStates } from './provider-state.ts';
import { createSharedLimits } from './shared-limits.ts';
import { processTraced } from './traced.ts';
import { preciseNow, type UrgentTrace, type Via } from './urgent-trace.ts';
import { URGENT_STEP_CLAIMS, type UrgentWindow } from './urgent-window.ts';

/**
 * The urgent lane's share of a worker's budget: CRITICAL's and HIGH's room only. NORMAL and LOW
 * get no channel room either, so that the lane's claim does not read their heads for a backlog
 * flag no one reads (the lane's result leaves the worker's backlog alone): two statements, each
 * a round trip on PostgreSQL, of every lane cycle that claims (#48).
 */
export function urgentShare(all: ClaimBudget): ClaimBudget {
  return {
    ...all,
    perPriority: all.perPriority.map((n, rank) => (urgentRank(rank) ? n : 0)),
    perChannel: all.perChannel.map((room, rank) => (urgentRank(rank) ? room : {})),
  };
}

/** Whether the priority of rank `rank` is CRITICAL or HIGH. */
const urgentRank = (rank: number) => isUrgent(PRIORITIES[rank] as Priority);

/**
 * A step's budget beside the urgent lane: CRITICAL and HIGH are the lane's to claim, so the step
 * only counts their ready rows (ClaimBudget.toLane) and never holds one until its bulk commits.
 * Their commit's wake-up asks the lane for them; the step asks it only for rows it promoted and
 * for those ready since before `before` (`graceMs` ago), whose wake-up never came (a redrive, a
 * resume, a lease reaped, a NOTIFY lost): asked at every step, the lane ran a second, empty
 * claim cycle for most CRITICALs, behind which the next one's claim waited.
 */
export function stepShare(all: ClaimBudget, before: number): ClaimBudget {
  return { ...all, toLane: { priorities: PRIORITIES.map((priority) => isUrgent(priority)), before } };
}

/** The urgent lane's two loops: its claims, and its completions' writes. */
type LanePart = 'claims' | 'writes';

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
  /** A person's preferences page for its templates (absent: `preferences_url` is null). */
  preferencesUrl?: DeliverDeps['preferencesUrl'];
  /** Told after each step that changed a notification's status (its events are committed). */
  onStatusChanged?: () => void;
  /** Marks the stages of each CRITICAL's way (HERALD_DISPATCH_TRACE); absent, nothing is marked. */
  trace?: UrgentTrace;
  /**
   * Only the urgent lane claims CRITICAL and HIGH; steps leave them to it (the worker's loop, where
   * the lane runs beside the step: PostgreSQL). Absent, a step claims every priority.
   */
  urgentInLane?: boolean;
  /**
   * Whether urgent work arrived lately, where a step runs on the thread that commits and claims
   * the CRITICALs (SQLite): a step then claims URGENT_STEP_CLAIMS NORMAL and LOW at most.
   */
  urgentWindow?: Pick<UrgentWindow, 'open'>;
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
  /** Steps leave CRITICAL and HIGH to the urgent lane (SchedulerDeps.urgentInLane). */
  readonly urgentInLane: boolean;
  /** One cycle; `claim: false` only writes completions (and promotes/reaps). */
  step(claim?: boolean): Promise<StepResult>;
  /** Sends in progress. */
  inFlight(): number;
  /**
   * Completions not yet written: those waiting for the next step, and the CRITICAL and HIGH ones
   * waiting for (or being written by) the urgent lane.
   */
  pending(): number;
  /** Completions the next step writes (the urgent lane writes the CRITICAL and HIGH ones). */
  pendingForStep(): number;
  /**
   * Claims ready CRITICAL and HIGH rows now, in the urgent lane, without waiting for the step in
   * progress (PostgreSQL: on a connection of its own, beside it) or the completions it would write.
   */
  claimUrgent(): void;
  /** The earliest due time of a waiting row seen by the last step. */
  nextDueAt(): number | null;
  /** Resolves when a send finishes (so the loop can write it), after `ms`, or when `signal` aborts. */
  settled(ms: number, signal?: AbortSignal): Promise<void>;
  /** Resolves when every current send has finished and the urgent lane has written what it took. */
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
    preferencesUrl: deps.preferencesUrl,
    providers: deps.providers,
    states,
    renderer: deps.renderer,
    clock,
    policy: config,
    random: deps.random ?? Math.random,
    metrics: deps.metrics,
    health: createProviderHealthLog(deps.log),
    trace: deps.trace,
  };
  const flights = new Map<number, Flight & { done: Promise<void> }>();
  const counts: [number, number, number, number] = [0, 0, 0, 0];
  let buffer: Completion[] = [];
  /** CRITICAL and HIGH completions for the urgent lane. */
  let urgent: Completion[] = [];
  /** A claim of CRITICAL and HIGH was asked of the urgent lane. */
  let urgentClaim = false;
  /**
   * The urgent lane's loops, while they run (LanePart), and how many completions they are writing.
   * Beside the step (urgentInLane) claims and completions run apart, so that neither waits for a
   * cycle of the other; else one loop does both.
   */
  const running: Record<LanePart, Promise<void> | undefined> = { claims: undefined, writes: undefined };
  /** Begins a loop of the lane that waits for its setImmediate at once instead. */
  const beginNow: Record<LanePart, (() => void) | undefined> = { claims: undefined, writes: undefined };
  const split = deps.urgentInLane === true;
  const takesWrites = (part: LanePart) => part === 'writes' || !split;
  const hasWork = (part: LanePart) =>
    (part === 'claims' && urgentClaim) || (takesWrites(part) && urgent.length > 0);
  const lanesDone = () => Promise.all([running.claims, running.writes]);
  let laneWriting = 0;
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
    // LOW is claimed in quarter batches: a step busy with bulk stays short (~2 ms), so a
    // CRITICAL committed meanwhile waits for little before the next step claims it; while urgent
    // work arrives, NORMAL and LOW take URGENT_STEP_CLAIMS at most (urgentWindow).
    const short = deps.urgentWindow?.open() === true;
    const most = (rank: number) => {
      if (short && !urgentRank(rank)) return URGENT_STEP_CLAIMS;
      return rank === 3 ? Math.ceil(batch / 4) : batch;
    };
    return {
      perPriority: slots.perPriority.map((n, rank) => Math.min(n, most(rank))),
      sharedLimit: Math.min(slots.sharedLimit, batch),
      perChannel,
    };
  }

  /** What a cycle of this worker (a step or the urgent lane) is given. */
  function cycleInput(now: number, completions: Completion[], claim: ClaimBudget | undefined): CycleInput {
    return {
      owner,
      now,
      leaseUntil: now + config.leaseMs,
      completions,
      claim,
      maxAttempts: config.retryMaxAttempts,
    };
  }

  /** The budget of the urgent lane. */
  const urgentBudget = () => urgentShare(budget());

  /** Each send may listen for the abort, so the step's signal takes as many listeners as it has sends. */
  function stepController(): AbortController {
    const controller = new AbortController();
    setMaxListeners(0, controller.signal);
    return controller;
  }

  /** Marks a cycle's CRITICAL claims and the completions it wrote (begun at `began`), when tracing. */
  function traceCycle(
    began: number,
    result: CycleResult,
    completions: readonly Completion[],
    via: Via,
  ): void {
    const { trace } = deps;
    if (!trace) return;
    const ended = preciseNow();
    for (const record of result.claimed) {
      if (record.priority !== 'CRITICAL') continue;
      trace.mark(record.seq, 'claimStart', began);
      trace.mark(record.seq, 'accepted', record.createdAt);
      trace.via(record.seq, 'claimStart', via);
      trace.mark(record.seq, 'claimCommitted', ended);
    }
    for (const { seq } of completions) {
      trace.via(seq, 'writeStart', via);
      trace.mark(seq, 'writeStart', began);
      trace.mark(seq, 'committed', ended);
    }
  }

  /** Where a finished send's completion goes: the urgent lane for CRITICAL and HIGH, else the next step. */
  function complete(priority: Priority, completion: Completion): void {
    deps.trace?.mark(completion.seq, 'queued');
    if (isUrgent(priority)) {
      urgent.push(completion);
      startLane(split ? 'writes' : 'claims', false);
      return;
    }
    buffer.push(completion);
    wake?.();
  }

  /**
   * Starts a loop of the urgent lane unless it runs (it loops while it has work). A claim starts
   * it at once: on SQLite, before the step the worker has queued behind setImmediate, and before
   * the bulk steps queued there (a fan-out's, the engine's), also when completions have already
   * started it. Completions start it after the current I/O callbacks, so the sends that finish
   * together are written together.
   */
  function startLane(part: LanePart, now: boolean): void {
    if (running[part]) {
      // A claim asked while the loop waits for its setImmediate (completions queued it): now.
      if (now) beginNow[part]?.();
      return;
    }
    const begin = now
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          beginNow[part] = resolve;
          setImmediate(resolve);
        });
    running[part] = begin
      .then(() => {
        beginNow[part] = undefined;
        return runLane(part);
      })
      .catch((error: unknown) => deps.log.error({ err: error }, 'urgent lane crashed'))
      .finally(() => {
        running[part] = undefined;
        // Work that came after the loop's last look and before this.
        if (hasWork(part)) startLane(part, part === 'claims' && urgentClaim);
      });
  }

  /**
   * The urgent lane: writes CRITICAL and HIGH completions and claims CRITICAL and HIGH rows in
   * cycles of their own, neither promoting nor reaping, so that neither waits for a step's LOW
   * batch (its completions, its claims, its commit). On SQLite a cycle runs between two steps;
   * on PostgreSQL beside the step in progress, on another connection (the rows it touches are
   * leased to this worker or locked with SKIP LOCKED, so the two never wait for each other).
   * There its claims and its completions run in loops of their own (`part`), each cycle on the
   * connection the store keeps for urgent claims or for urgent writes.
   */
  async function runLane(part: LanePart): Promise<void> {
    while (hasWork(part)) {
      const completions = takesWrites(part) ? urgent : [];
      if (takesWrites(part)) urgent = [];
      const claim = part === 'claims' && urgentClaim;
      if (claim) urgentClaim = false;
      laneWriting += completions.length;
      const now = clock.now();
      const began = preciseNow();
      let result: CycleResult;
      try {
        result = await store.queue.cycle({
          ...cycleInput(now, completions, claim ? urgentBudget() : undefined),
          promoteLimit: 0,
          reapLimit: 0,
          urgent: true,
        });
      } catch (error) {
        // The next step writes them (and claims what the lane did not).
        deps.log.error({ err: error }, 'urgent lane failed; the next step writes its completions');
        buffer = completions.concat(buffer);
        wake?.();
        return;
      } finally {
        laneWriting -= completions.length;
      }
      traceCycle(began, result, completions, 'lane');
      if (result.claimed.length > 0) {
        const controller = stepController();
        for (const record of result.claimed) launch({ record, controller, startedAt: now, released: false });
      }
      // A retry written here may fall due before the time the loop sleeps until.
      if (result.nextDueAt !== null && (nextDue === null || result.nextDueAt < nextDue)) {
        nextDue = result.nextDueAt;
        wake?.();
      }
      // Slots came free: rows left behind for lack of them may be claimed now.
      if (result.applied > 0 && backlog.some(Boolean)) wake?.();
      if (completions.length > 0) await followUp(store, completions, result.stale, now, deps.log);
      if (result.applied + result.claimed.length + result.expired + result.suppressed > 0)
        deps.onStatusChanged?.();
    }
  }

  function launch(flight: Flight): void {
    const rank = priorityRank(flight.record.priority);
    counts[rank] = (counts[rank] ?? 0) + 1;
    deps.trace?.mark(flight.record.seq, 'handed');
    // A push to a person goes to every target of the profile in one attempt (deliver-targets.ts);
    // an `inapp` message is stored in the recipient's inbox (deliver-inbox.ts).
    const targets = flight.record.person?.targets;
    const sending = processTraced(flight.record, () =>
      flight.record.channel === 'inapp'
        ? deliverToInbox(deliverDeps, flight)
        : targets === undefined
          ? deliver(deliverDeps, flight)
          : deliverToTargets(deliverDeps, flight, targets),
    );
    const done = sending.then(
      (completion) => {
        counts[rank] = (counts[rank] ?? 1) - 1;
        flights.delete(flight.record.seq);
        complete(flight.record.priority, completion);
      },
      (error: unknown) => {
        // deliver() maps every outcome to a completion; this is a bug, so keep the worker sane:
        // give the notification back shortly instead of leaving it leased until the reaper.
        deps.log.error({ err: error, seq: flight.record.seq }, 'delivery crashed');
        counts[rank] = (counts[rank] ?? 1) - 1;
        flights.delete(flight.record.seq);
        const { seq, attempts } = flight.record;
        complete(flight.record.priority, {
          seq,
          attempt: attempts,
          kind: 'hold',
          until: clock.now() + 1000,
          detail: 'internal error',
          repeat: flight.record.holds > 0,
        });
      },
    );
    flights.set(flight.record.seq, Object.assign(flight, { done }));
  }

  const scheduler: Scheduler = {
    owner,
    urgentInLane: deps.urgentInLane === true,
    async step(claim = true) {
      // Top up the shared-limit pools before the budget reads them (a no-op without sharing).
      if (claim) await shared?.sync();
      else {
        // Writing what is left (shutdown, tests): the lane's too, so none is left behind.
        await lanesDone();
        buffer = buffer.concat(urgent);
        urgent = [];
      }
      const now = clock.now();
      const completions = buffer;
      buffer = [];
      const began = preciseNow();
      let result: CycleResult;
      try {
        const claimBudget = claim
          ? deps.urgentInLane
            ? stepShare(budget(), now - config.pollMs)
            : budget()
          : undefined;
        result = await store.queue.cycle(cycleInput(now, completions, claimBudget));
      } catch (error) {
        buffer = completions.concat(buffer); // keep them for the next try
        throw error;
      }
      traceCycle(began, result, completions, 'step');
      // Ready CRITICAL or HIGH rows no wake-up announced (promoted by this step, or ready since
      // before a poll interval ago: resumed, reaped, a lost NOTIFY): the lane claims them now.
      if (result.forLane) scheduler.claimUrgent();
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
    pending: () => buffer.length + urgent.length + laneWriting,
    pendingForStep: () => buffer.length,
    claimUrgent() {
      urgentClaim = true;
      startLane('claims', true);
    },
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
      while (flights.size > 0 || running.claims || running.writes) {
        await Promise.all([...flights.values()].map((f) => f.done));
        await lanesDone();
      }
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
