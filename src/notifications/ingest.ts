import type { Span } from '@opentelemetry/api';
import type { Config } from '../config/config.ts';
import type { CoreDeps } from '../deps.ts';
import { type FieldError, HeraldError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import type { QuotaGate } from '../quotas/gate.ts';
import {
  type EncodedColumns,
  type EncodedNotification,
  encodeColumns,
  type IdempotentHit,
  type PackedColumns,
} from '../store/port/notifications.ts';
import type { TemplateRecord } from '../store/port/templates.ts';
import { categoryOf } from '../templates/default-category.ts';
import { type LiquidSource, liquidSources } from '../templates/fields.ts';
import type { SyntaxCheck } from '../templates/syntax-check.ts';
import { traceparentOf, withEvent } from '../tracing/tracer.ts';
import type { CheckedItem, ItemVerdict } from './batch-items.ts';
import {
  createGroupCommit,
  type GroupCommit,
  type GroupCommitStats,
  resultsPerItem,
} from './group-commit.ts';
import { notificationId, requestHash } from './ids.ts';
import { type Channel, type Priority, priorityRank } from './model.ts';
import { type RecipientDigests, recipientDigest } from './recipient-digest.ts';
import { type ValidNotification, validateNotification } from './validate.ts';
import { acceptedView } from './view.ts';
import { isUrgent, type WakeSignal } from './wakeup.ts';

/** How long an Idempotency-Key holds: a replay within 24 h returns the first answer (a workflow trigger's too). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** 400 for an Idempotency-Key header that is not 1 to 255 visible ASCII characters (section 3). */
export function checkIdempotencyKey(key: string | undefined): void {
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw new HeraldError('VALIDATION_FAILED', 'The Idempotency-Key header is invalid.', {
      errors: [{ path: 'headers/idempotency-key', message: 'must be 1 to 255 visible ASCII characters' }],
    });
  }
}

/** One item's outcome in a batch: accepted, or refused with its own problem. */
export type BatchItemResult =
  | { index: number; notificationId: string; status: 'QUEUED' }
  | { index: number; error: HeraldError };

/** Accepting notifications durably: validation, template pinning, idempotency, group commit. */
export interface Ingest {
  /**
   * One notification; resolves after its commit with 201 (new) or 200 (idempotent replay).
   * `span` is the request's server span when it is traced (http/trace-hooks.ts `requestSpan`).
   */
  accept(
    tenant: string,
    body: unknown,
    idempotencyKey: string | undefined,
    span?: Span,
  ): Promise<{ status: 200 | 201; body: ReturnType<typeof acceptedView> }>;
  /**
   * Up to 1000 items, each already validated alone (by a batch thread, batch-items.ts); the
   * accepted ones share one commit.
   */
  acceptBatch(tenant: string, verdicts: ItemVerdict[], span?: Span): Promise<BatchItemResult[]>;
  /** The batcher's counters (transactions, items, pending). */
  stats(): GroupCommitStats;
  /** Commits everything pending and waits for it (shutdown, before the store closes). */
  drain(): Promise<void>;
}

/**
 * Commits accepted rows in one transaction: one result per row, a live idempotent twin or nothing.
 * `urgent`: every row is CRITICAL or HIGH (the group commit's urgent flush), which a writer in
 * another thread commits ahead of the hand-overs queued before it (dispatch/thread.ts).
 */
export type CommitRows = (
  rows: EncodedNotification[],
  since: number,
  urgent?: boolean,
) => Promise<Array<IdempotentHit | undefined>>;

/**
 * What ingest is built from: the store, the worker's wake-up it signals after each commit, and
 * the Liquid syntax check of inline content (in the render threads), the tenants' recipient
 * digest keys (recipient-digest.ts). `writer` commits instead
 * of the store when another thread owns the writes and wakes its own worker (the dispatch
 * thread on SQLite, dispatch/thread.ts).
 */
export type IngestDeps = CoreDeps & {
  recipientDigests: RecipientDigests;
  wakeup: WakeSignal;
  syntax: SyntaxCheck;
  metrics?: Metrics;
  /** Per-tenant quotas, checked once an acceptance is valid, before its commit (docs/quotas.md). */
  quotas?: QuotaGate;
  writer?: CommitRows;
};

const invalid = (errors: FieldError[]) =>
  new HeraldError('VALIDATION_FAILED', 'The notification is invalid.', { errors });

/** The answer to a template key that names no template of the notification's channel. */
function templateMismatch(v: { template: string | null; channel: Channel }, at = 'body'): HeraldError {
  const key = v.template as string;
  return new HeraldError('TEMPLATE_NOT_FOUND', `No ${v.channel} template "${key}" exists in your tenant.`, {
    errors: [{ path: `${at}/template`, message: `must name a ${v.channel} template of your tenant` }],
  });
}

/** The answer to a `{ id }` recipient that names no recipient of the tenant (docs/sending-to-people.md). */
function recipientNotFound(id: string, at = 'body'): HeraldError {
  return new HeraldError('RECIPIENT_NOT_FOUND', `No recipient "${id}" exists in your tenant.`, {
    errors: [{ path: `${at}/recipient/id`, message: 'must name a recipient of your tenant' }],
  });
}

/**
 * The row to store, its JSON columns serialized in the request (see EncodedNotification): here,
 * or by the batch thread that checked a batch's item (batch-items.ts).
 */
function toRow(
  tenant: string,
  v: Pick<ValidNotification, 'channel' | 'priority' | 'locale' | 'scheduledAt' | 'expiresAt' | 'category'>,
  encoded: EncodedColumns | PackedColumns,
  template: TemplateRecord | null,
  now: number,
  idempotencyKey: string | null,
  hash: string | null,
  traceContext: string | null,
): EncodedNotification {
  return {
    id: notificationId(now),
    tenant,
    channel: v.channel,
    priority: v.priority,
    templateKey: template ? template.key : null,
    templateVersion: template ? template.version : null,
    locale: v.locale,
    idempotencyKey,
    requestHash: hash,
    scheduledAt: v.scheduledAt,
    expiresAt: v.expiresAt,
    createdAt: now,
    category: categoryOf(v.category, template),
    traceContext,
    encoded,
  };
}

/** Counts committed rows by channel and priority: one counter call per pair, not per row. */
function countAccepted(
  metrics: Metrics,
  rows: EncodedNotification[],
  hits: Array<IdempotentHit | undefined>,
) {
  const counts = new Map<string, number>();
  rows.forEach((row, i) => {
    if (hits[i]) return;
    const key = `${row.channel} ${row.priority}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  });
  for (const [key, n] of counts) {
    const [channel, priority] = key.split(' ') as [string, string];
    metrics.accepted.inc({ channel, priority }, n);
  }
}

/** A row's urgency in the group commit: CRITICAL (2) and HIGH (1) rows flush apart from the bulk (0) and from each other. */
const urgencyOf = (priority: Priority) => (isUrgent(priority) ? 2 - priorityRank(priority) : 0);

/** The rows of the hand-overs one batcher may have on their way to the dispatch thread at once. */
const HANDED_OVER_ROWS = 4000;

/**
 * The limits of a group commit of ingest's kind (notifications, workflow triggers): its weight in
 * a flush and waiting, and its flushes under way at once. Rows handed to the dispatch thread
 * (`handedOver`) are copied into its heap: smaller hand-overs keep both heaps small (`npm run bench
 * -- --scenario memory`), and `handOvers` of them may be on their way (the thread commits them in
 * the order they arrive, joining those queued together), HANDED_OVER_ROWS together at most; a
 * batcher's CRITICAL and HIGH flushes (group-commit.ts `urgency`), one of each at a time, go
 * beside them and ahead of them. Otherwise `atOnce` flushes: how many of the store's transactions may overlap.
 */
export function flushLimits(
  config: Pick<Config, 'ingestMaxBatch' | 'ingestMaxPending'>,
  handedOver: boolean,
  atOnce: number,
  handOvers = 2,
): { maxBatch: number; maxPending: number; inFlight: number } {
  return {
    maxBatch: handedOver
      ? Math.min(HANDED_OVER_ROWS / handOvers, config.ingestMaxBatch)
      : config.ingestMaxBatch,
    maxPending: config.ingestMaxPending,
    inFlight: handedOver ? handOvers : atOnce,
  };
}

/** Builds the ingest path on the store, with a group-commit batcher that wakes the worker after each commit. */
export function createIngest(deps: IngestDeps): Ingest {
  const { store, clock } = deps;
  const commitRows: CommitRows =
    deps.writer ?? ((rows, since) => store.notifications.insertMany(rows, since));
  const pushAllowedHosts = deps.config.providers.pushAllowedHosts ?? [];
  const batcher: GroupCommit<EncodedNotification[], Array<IdempotentHit | undefined>> = createGroupCommit({
    weight: (rows) => rows.length,
    // One tenant's flood fills at most half of HERALD_INGEST_MAX_PENDING (every row of a request is its tenant's).
    owner: (rows) => rows[0]?.tenant ?? '',
    // A CRITICAL request waits for no other priority's commit, a HIGH one for no NORMAL or LOW
    // one (group-commit.ts): a request's urgency is that of its least urgent row.
    urgency: (rows) => (rows.length === 0 ? 0 : Math.min(...rows.map((row) => urgencyOf(row.priority)))),
    ...flushLimits(deps.config, deps.writer !== undefined, store.notifications.insertsAtOnce),
    async flush(groups, urgency) {
      const rows = groups.flat();
      const results = await commitRows(rows, clock.now() - IDEMPOTENCY_WINDOW_MS, urgency > 0);
      if (deps.metrics) countAccepted(deps.metrics, rows, results);
      return resultsPerItem(
        results,
        groups.map((rows) => rows.length),
      );
    },
    afterCommit: deps.writer ? undefined : () => deps.wakeup.notify(),
  });

  /**
   * Submits rows to the next group commit, recorded as a `commit` event of the request's span
   * with the time the request waited for its transaction (docs/tracing.md).
   */
  const commit = (rows: EncodedNotification[], span: Span | undefined) =>
    withEvent(span, 'commit', { 'herald.notifications': rows.length }, () => batcher.submit(rows));

  const replay = (hit: IdempotentHit, hash: string) => {
    if (hit.requestHash !== hash) {
      throw new HeraldError(
        'IDEMPOTENCY_CONFLICT',
        'This Idempotency-Key was used within 24 hours with a different body.',
      );
    }
    return { status: 200 as const, body: acceptedView(hit.record) };
  };

  return {
    async accept(tenant, body, idempotencyKey, span) {
      const now = clock.now();
      checkIdempotencyKey(idempotencyKey);
      const v = validateNotification(body, 'body', now, pushAllowedHosts);
      if (Array.isArray(v)) throw invalid(v);
      if (v.content !== null) {
        const [errors = []] = await deps.syntax(tenant, [
          { sources: liquidSources(v.content), prefix: 'body/content', rank: priorityRank(v.priority) },
        ]);
        if (errors.length > 0) throw invalid(errors);
      }
      const hash = idempotencyKey === undefined ? null : requestHash(body);
      if (idempotencyKey !== undefined) {
        const hit = await store.notifications.findIdempotent(
          tenant,
          idempotencyKey,
          now - IDEMPOTENCY_WINDOW_MS,
        );
        if (hit) return replay(hit, hash as string);
      }
      let template: TemplateRecord | null = null;
      if (v.template !== null) {
        template = await store.templates.get(tenant, v.template);
        if (!template || template.channel !== v.channel) throw templateMismatch(v);
      }
      // A person is checked to exist now; its address is read when the notification is processed.
      const person = v.recipient.id;
      if (person !== undefined && !(await store.recipients.get(tenant, person)))
        throw recipientNotFound(person);
      const digest = recipientDigest(await deps.recipientDigests.tenantKey(tenant), v.recipient);
      const encoded = encodeColumns(v, digest);
      const row = toRow(tenant, v, encoded, template, now, idempotencyKey ?? null, hash, traceparentOf(span));
      if (deps.quotas) {
        const { refusal } = await deps.quotas.admit(tenant, [
          { channel: v.channel, rank: priorityRank(v.priority) },
        ]);
        if (refusal) throw refusal;
      }
      const [hit] = await commit([row], span);
      if (hit) return replay(hit, hash as string);
      return { status: 201, body: acceptedView(row) };
    },

    async acceptBatch(tenant, verdicts, span) {
      const now = clock.now();
      const results: BatchItemResult[] = new Array(verdicts.length);
      let valid: Array<{ index: number; item: CheckedItem }> = [];
      verdicts.forEach((verdict, index) => {
        if ('errors' in verdict) results[index] = { index, error: invalid(verdict.errors) };
        else valid.push({ index, item: verdict.item });
      });
      // The inline content's Liquid, in one check (its sources parsed off this event loop).
      const inline = valid.filter(({ item }) => item.liquid !== null);
      if (inline.length > 0) {
        const problems = await deps.syntax(
          tenant,
          inline.map(({ index, item }) => ({
            sources: item.liquid as LiquidSource[],
            prefix: `body/notifications/${index}/content`,
            rank: priorityRank(item.priority),
          })),
        );
        inline.forEach(({ index }, i) => {
          const errors = problems[i] ?? [];
          if (errors.length > 0) results[index] = { index, error: invalid(errors) };
        });
        valid = valid.filter(({ index }) => results[index] === undefined);
      }
      // Each distinct template key is looked up once per batch, not once per item.
      const templates = new Map<string, TemplateRecord | null>();
      for (const { item } of valid) {
        if (item.template !== null && !templates.has(item.template)) {
          templates.set(item.template, await store.templates.get(tenant, item.template));
        }
      }
      // Every person the batch names, in one read.
      const ids = new Set<string>();
      for (const { item } of valid) if (item.recipientId !== null) ids.add(item.recipientId);
      const known = new Set(await store.recipients.known(tenant, [...ids]));
      const rows: EncodedNotification[] = [];
      const rowIndex: number[] = [];
      // Every item carries the request's trace context: each is processed in the request's trace.
      const traceContext = traceparentOf(span);
      for (const { index, item } of valid) {
        if (item.recipientId !== null && !known.has(item.recipientId)) {
          results[index] = {
            index,
            error: recipientNotFound(item.recipientId, `body/notifications/${index}`),
          };
          continue;
        }
        let template: TemplateRecord | null = null;
        if (item.template !== null) {
          template = templates.get(item.template) ?? null;
          if (!template || template.channel !== item.channel) {
            results[index] = { index, error: templateMismatch(item, `body/notifications/${index}`) };
            continue;
          }
        }
        rows.push(toRow(tenant, item, item.encoded, template, now, null, null, traceContext));
        rowIndex.push(index);
      }
      if (deps.quotas && rows.length > 0) {
        // Valid items only, in order: past a limit the rest answer RATE_LIMITED each (section 3: each on its own).
        const { admitted, refusal } = await deps.quotas.admit(
          tenant,
          rows.map((row) => ({ channel: row.channel, rank: priorityRank(row.priority) })),
        );
        if (refusal) {
          const kept = rows.filter((_, i) => admitted[i]);
          const keptIndex = rowIndex.filter((_, i) => admitted[i]);
          rowIndex.forEach((index, i) => {
            if (!admitted[i]) results[index] = { index, error: refusal };
          });
          rows.splice(0, rows.length, ...kept);
          rowIndex.splice(0, rowIndex.length, ...keptIndex);
        }
      }
      if (rows.length > 0) await commit(rows, span);
      rows.forEach((row, i) => {
        const index = rowIndex[i] as number;
        results[index] = { index, notificationId: row.id, status: 'QUEUED' };
      });
      return results;
    },

    stats: () => batcher.stats(),
    drain: () => batcher.drain(),
  };
}
