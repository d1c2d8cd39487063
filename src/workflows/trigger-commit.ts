/**
 * The group commit of workflow triggers (docs/workflow-runs.md "Triggers"), on the same batcher as
 * ingest (notifications/group-commit.ts): triggers that arrive together are stored in one
 * transaction, one fsync for all of them, and each answers once that transaction committed.
 */
import type { CoreDeps } from '../deps.ts';
import { createGroupCommit, type GroupCommit } from '../notifications/group-commit.ts';
import { flushLimits, IDEMPOTENCY_WINDOW_MS } from '../notifications/ingest.ts';
import type { WakeSignal } from '../notifications/wakeup.ts';
import type { TriggerHit, TriggerItem } from '../store/port/workflow-runs.ts';

/** Commits triggers in one transaction: one result per item, a live Idempotency-Key's hit or nothing. */
export type CommitTriggers = (items: TriggerItem[], since: number) => Promise<Array<TriggerHit | undefined>>;

/** Triggers waiting for their transaction. */
export type TriggerCommit = GroupCommit<TriggerItem, TriggerHit | undefined>;

/**
 * What it is built from: the store, the engine's wake-up it signals after each commit, and
 * `writer`, which commits instead of the store where another thread owns the writes (the
 * dispatch thread on SQLite, dispatch/thread.ts), as for ingest.
 */
export type TriggerCommitDeps = CoreDeps & {
  runsWakeup: WakeSignal;
  writer?: CommitTriggers;
};

/**
 * Trigger groups on their way to the dispatch thread at once (SQLite): four smaller ones rather
 * than ingest's two, so a group leaves as soon as its requests are parsed instead of waiting for
 * a commit's answer, and the thread joins those that queued while it was busy into one
 * transaction (dispatch/joined-inserts.ts): fewer, larger commits (decision 0057).
 */
const TRIGGER_HAND_OVERS = 4;

export function createTriggerCommit(deps: TriggerCommitDeps): TriggerCommit {
  const commit: CommitTriggers =
    deps.writer ?? ((items, from) => deps.store.workflowRuns.triggerMany(items, from));
  return createGroupCommit({
    // A trigger weighs its rows: itself and its runs. The limits are ingest's, overlapping
    // transactions among them (PostgreSQL's: a trigger waiting for a taken Idempotency-Key's lock
    // holds up only its own group).
    weight: (item) => item.runs.length + 1,
    owner: (item) => item.trigger.tenant,
    noun: 'workflow triggers',
    ...flushLimits(
      deps.config,
      deps.writer !== undefined,
      deps.store.notifications.insertsAtOnce,
      TRIGGER_HAND_OVERS,
    ),
    flush: (items) => commit(items, deps.clock.now() - IDEMPOTENCY_WINDOW_MS),
    // The engine starts the new runs now rather than at its next poll (a topic's: its fan-out).
    afterCommit: () => deps.runsWakeup.notify(),
  });
}
