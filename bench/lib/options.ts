/** Command-line flags of `npm run bench` and the sizes they select. */

/** How long or how much one load round runs: a duration in seconds, or a request count. */
export interface RoundSize {
  seconds?: number;
  amount?: number;
}

/** Every size the scenarios use; `--quick` picks tiny ones so the smoke test stays cheap. */
export interface Sizes {
  rounds: number;
  ingest: { connections: number; warmup: RoundSize; round: RoundSize };
  batch: { size: number; connections: number; warmup: RoundSize; round: RoundSize };
  isolation: { backlog: number; everyMs: number; forMs: number; lowRate: number };
  dispatch: { count: number };
  callbacks: {
    count: number;
    streams: number;
    steadyPerSecond: number;
    steadyMs: number;
    /** A neighbour's burst: `callbacks` callbacks of another tenant, `burst` notifications. */
    neighbour: { callbacks: number; burst: number };
    /** Herald's CPU per status callback: a window at a fixed rate (bench/lib/callback-cpu.ts). */
    cpu: { perSecond: number; forMs: number; warmMs: number };
  };
  failover: { everyMs: number; downMs: number; backMs: number };
  claim: { sizes: number[]; claimsPerSize: number; claimBatch: number };
  /** The status log of the catch-up scenario: changes a month old, and another tenant's of the last hour. */
  catchUp: { old: number; recent: number };
  memory: { backlog: number; drainSeconds: number };
  auth: { verifySeconds: number; login: RoundSize; loginConnections: number };
  startup: { runs: number; idleSeconds: number; settledSeconds: number };
  /** Liquid isolation: items of each parsing batch; rounds of runaway renders beside a CRITICAL. */
  liquid: { batchItems: number; rounds: number };
  /** Renders of the template per round, on the event loop and in the pool each. */
  render: { count: number };
  /** Recipients sent through POST /recipients/batch: in all, a request, requests in flight. */
  recipients: { total: number; batch: number; connections: number };
  /**
   * A broadcast's topic, and one CRITICAL every `everyMs` for `criticalMs` while it fans out (0:
   * none, the fan-out's rate alone, `--fan-out-alone`).
   */
  fanOut: { subscribers: number; everyMs: number; criticalMs: number };
  /**
   * The in-app inbox: open streams (one per recipient) and the broadcast to them; GET /inbox's
   * messages in the store, for its recipient, and requests timed; inapp and email drained.
   */
  inbox: { streams: number; stored: number; perRecipient: number; reads: number; dispatch: number };
  /**
   * Workflow runs (store level): runs resumed when their delay falls due; triggers of one run each
   * into a digest for `recipients` recipients.
   */
  workflows: { resumed: number; digestTriggers: number; recipients: number };
  /**
   * Workflow runs in npm start's process: runs seeded waiting in a delay; the idle CPU window after
   * start-up; the trigger round (100 recipients a trigger); one CRITICAL every `everyMs` for
   * `criticalMs` while the waiting runs fall due.
   */
  workflowsProcess: {
    waiting: number;
    settleSeconds: number;
    idleSeconds: number;
    triggerRound: RoundSize;
    triggerConnections: number;
    everyMs: number;
    criticalMs: number;
  };
}

/** What the flags asked for. */
export interface BenchOptions {
  quick: boolean;
  scenarios: string[] | undefined;
  postgres: boolean;
  out: string | undefined;
  keep: boolean;
  quiet: boolean;
  /** Rewrite the table in README.md's Performance section from this run. */
  /** Put the table in docs/performance.md. */
  docs: boolean;
  sizes: Sizes;
}

const FULL: Sizes = {
  rounds: 3,
  ingest: { connections: 64, warmup: { seconds: 3 }, round: { seconds: 10 } },
  batch: { size: 1000, connections: 4, warmup: { seconds: 2 }, round: { seconds: 5 } },
  isolation: { backlog: 1_000_000, everyMs: 10, forMs: 10_000, lowRate: 2000 },
  dispatch: { count: 200_000 },
  callbacks: {
    count: 100_000,
    streams: 100,
    steadyPerSecond: 1000,
    steadyMs: 15_000,
    neighbour: { callbacks: 20, burst: 5_000 },
    cpu: { perSecond: 3000, forMs: 10_000, warmMs: 3000 },
  },
  failover: { everyMs: 10, downMs: 10_000, backMs: 15_000 },
  claim: { sizes: [10_000, 100_000, 1_000_000], claimsPerSize: 50, claimBatch: 128 },
  catchUp: { old: 2_000_000, recent: 200_000 },
  memory: { backlog: 1_000_000, drainSeconds: 10 },
  auth: { verifySeconds: 3, login: { seconds: 5 }, loginConnections: 4 },
  startup: { runs: 5, idleSeconds: 3, settledSeconds: 15 },
  liquid: { batchItems: 1000, rounds: 20 },
  render: { count: 20_000 },
  recipients: { total: 200_000, batch: 1000, connections: 4 },
  fanOut: { subscribers: 1_000_000, everyMs: 10, criticalMs: 5_000 },
  inbox: { streams: 10_000, stored: 1_000_000, perRecipient: 1_000, reads: 2_000, dispatch: 200_000 },
  workflows: { resumed: 1_000_000, digestTriggers: 100_000, recipients: 1_000 },
  workflowsProcess: {
    waiting: 1_000_000,
    settleSeconds: 10,
    idleSeconds: 30,
    triggerRound: { seconds: 5 },
    triggerConnections: 8,
    everyMs: 20,
    criticalMs: 10_000,
  },
};

const QUICK: Sizes = {
  // One round of each alternation: --quick checks that every part of the harness runs (the
  // smoke test, test/bench/bench-smoke.test.ts, in every CI run); its figures mean nothing.
  rounds: 1,
  ingest: { connections: 8, warmup: { amount: 50 }, round: { amount: 200 } },
  batch: { size: 50, connections: 2, warmup: { amount: 2 }, round: { amount: 6 } },
  isolation: { backlog: 2000, everyMs: 10, forMs: 500, lowRate: 200 },
  dispatch: { count: 1000 },
  callbacks: {
    count: 500,
    streams: 5,
    steadyPerSecond: 200,
    steadyMs: 1000,
    neighbour: { callbacks: 3, burst: 100 },
    cpu: { perSecond: 200, forMs: 1000, warmMs: 500 },
  },
  failover: { everyMs: 20, downMs: 1000, backMs: 7000 },
  claim: { sizes: [200, 1000, 4000], claimsPerSize: 5, claimBatch: 16 },
  catchUp: { old: 20_000, recent: 2_000 },
  memory: { backlog: 2000, drainSeconds: 1 },
  auth: { verifySeconds: 0.2, login: { amount: 20 }, loginConnections: 2 },
  startup: { runs: 1, idleSeconds: 0.5, settledSeconds: 1 },
  liquid: { batchItems: 20, rounds: 2 },
  render: { count: 500 },
  recipients: { total: 2000, batch: 100, connections: 2 },
  fanOut: { subscribers: 5_000, everyMs: 20, criticalMs: 500 },
  inbox: { streams: 100, stored: 5_000, perRecipient: 100, reads: 100, dispatch: 1_000 },
  workflows: { resumed: 2_000, digestTriggers: 1_000, recipients: 10 },
  workflowsProcess: {
    waiting: 2_000,
    settleSeconds: 0.5,
    idleSeconds: 1,
    triggerRound: { amount: 20 },
    triggerConnections: 2,
    everyMs: 20,
    criticalMs: 500,
  },
};

export const USAGE = `Usage: npm run bench -- [flags]

  --quick                  tiny sizes: checks the harness end to end in a minute or two
  --scenario NAME          run only this scenario (repeatable, or comma-separated):
                           ingest, ingest-api-only, peer, batch, batch-api-only, isolation,
                           abuse, dispatch, callbacks, suppressions, failover, claim, catch-up,
                           memory, render, liquid-parse, liquid-critical, auth, startup,
                           gateway, recipients-import, fan-out, inbox, workflows, workflows-process (and ingest-postgres,
                           dispatch-postgres, fan-out-postgres, inbox-postgres,
                           workflows-process-postgres, workflows-postgres)
  --postgres               follow ingest and dispatch with the same on PostgreSQL (1 auth, 2 api
                           and worker processes; scenarios ingest-postgres, dispatch-postgres)
  --isolation-backlog N    LOW notifications queued before the isolation window (default 1000000)
  --memory-backlog N       notifications queued for the memory scenario (default 1000000)
  --fan-out-subscribers N  the topic's subscribers in the fan-out scenarios (default 1000000)
  --fan-out-alone          no CRITICAL sent during the fan-out scenarios (their rate alone)
  --workflow-runs N        runs resumed from a due delay in the workflows scenario (default 1000000)
  --workflow-digest-triggers N  triggers into one digest window, workflows scenario (default 100000)
  --workflow-waiting N     runs waiting in a delay in the workflows-process scenario (default 1000000)
  --trigger-connections N  triggers in flight in the workflows-process trigger round (default 8)
  --dispatch-count N       NORMAL notifications drained by the dispatch scenario (default 200000)
  --rounds N               alternating rounds per ratio (default 3, at least 3)
  --round-seconds N        length of one ingest, batch or login round (default 10, 5, 5)
  --out PATH               where to write the results (default bench/results/latest.json,
                           bench/results/quick.json with --quick)
  --docs                   put this run's table in docs/performance.md (--readme: the same)
  --keep                   keep the temporary data directories
  --quiet                  no progress lines`;

function positiveInt(flag: string, value: string | undefined): number {
  const n = Number(value);
  if (!value || !Number.isInteger(n) || n <= 0) throw new Error(`${flag} needs a positive integer`);
  return n;
}

/** Flags that set one size each. */
const NUMERIC: Record<string, (sizes: Sizes, n: number) => void> = {
  '--isolation-backlog': (sizes, n) => {
    sizes.isolation.backlog = n;
  },
  '--memory-backlog': (sizes, n) => {
    sizes.memory.backlog = n;
  },
  '--workflow-runs': (sizes, n) => {
    sizes.workflows.resumed = n;
  },
  '--workflow-digest-triggers': (sizes, n) => {
    sizes.workflows.digestTriggers = n;
  },
  '--workflow-waiting': (sizes, n) => {
    sizes.workflowsProcess.waiting = n;
  },
  '--trigger-connections': (sizes, n) => {
    sizes.workflowsProcess.triggerConnections = n;
  },
  '--fan-out-subscribers': (sizes, n) => {
    sizes.fanOut.subscribers = n;
  },
  '--dispatch-count': (sizes, n) => {
    sizes.dispatch.count = n;
  },
  '--round-seconds': (sizes, n) => {
    sizes.ingest.round = { seconds: n };
    sizes.batch.round = { seconds: n };
    sizes.auth.login = { seconds: n };
  },
  '--rounds': (sizes, n) => {
    if (n < 3) throw new Error('--rounds must be at least 3 (a ratio is the median of 3 or more rounds)');
    sizes.rounds = n;
  },
};

/** Parses the flags; throws an Error with a readable message on a bad one. */
export function parseOptions(argv: readonly string[]): BenchOptions {
  let quick = false;
  let postgres = false;
  let keep = false;
  let quiet = false;
  let docs = false;
  let out: string | undefined;
  const scenarios: string[] = [];
  const overrides: Array<(sizes: Sizes) => void> = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    const [name, inline] = flag.includes('=') ? flag.split(/=(.*)/s, 2) : [flag, undefined];
    const value = () => inline ?? argv[++i];
    switch (name) {
      case '--quick':
        quick = true;
        break;
      case '--postgres':
        postgres = true;
        break;
      case '--keep':
        keep = true;
        break;
      case '--quiet':
        quiet = true;
        break;
      case '--docs':
      case '--readme':
        docs = true;
        break;
      case '--fan-out-alone':
        overrides.push((sizes) => {
          sizes.fanOut.criticalMs = 0;
        });
        break;
      case '--scenario':
        scenarios.push(...(value() ?? '').split(',').filter(Boolean));
        break;
      case '--out':
        out = value();
        break;
      default: {
        const setter = NUMERIC[name as string];
        if (!setter) throw new Error(`unknown flag ${flag}\n\n${USAGE}`);
        const n = positiveInt(name as string, value());
        overrides.push((sizes) => setter(sizes, n));
        break;
      }
    }
  }
  if (docs && quick) throw new Error('--docs takes a full-size run; --quick figures mean nothing');
  const sizes = structuredClone(quick ? QUICK : FULL);
  for (const apply of overrides) apply(sizes);
  return {
    quick,
    scenarios: scenarios.length ? scenarios : undefined,
    postgres,
    out,
    keep,
    quiet,
    docs,
    sizes,
  };
}
