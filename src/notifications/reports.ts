import type { Clock } from '../clock.ts';
import type { Store } from '../store/port/index.ts';
import type { ReportOutcome } from '../store/port/reports.ts';
import type { DeliveryReport } from './delivery-report.ts';

/** Where providers hand asynchronous reports (SMPP receipts); webhooks use the same path. */
export interface ReportSink {
  report(report: DeliveryReport): Promise<void>;
}

/** The reports service: a ReportSink that also says what each report did (webhook answers use it). */
export interface ReportService extends ReportSink {
  apply(report: DeliveryReport): Promise<ReportOutcome>;
}

/** Pending reports whose message id was never recorded are dropped after this long. */
const PENDING_REPORT_TTL_MS = 24 * 3600_000;
/** At most this many pending reports per provider: past it, unmatched reports are not kept. */
const PENDING_REPORT_CAP = 100_000;
const PURGE_EVERY_MS = 3600_000;
/** How long a provider's pending count is trusted before it is counted again. */
const RECOUNT_EVERY_MS = 10_000;

/**
 * The one path every delivery report takes, from a webhook or an SMPP receipt: matched by
 * (provider, provider message id), forward-only, kept pending when the id is not recorded yet.
 * Strays (ids never recorded, e.g. a message sent outside Herald) are purged now and then.
 */
export function createReportService(
  store: Pick<Store, 'reports'>,
  clock: Clock,
  cap = PENDING_REPORT_CAP,
): ReportService {
  let lastPurge = 0;
  // Per provider: the pending count as last read, plus what this process kept since.
  const counts = new Map<string, { n: number; at: number }>();
  const mayKeep = async (provider: string, now: number) => {
    let count = counts.get(provider);
    if (!count || now - count.at >= RECOUNT_EVERY_MS) {
      count = { n: await store.reports.pendingCount(provider), at: now };
      counts.set(provider, count);
    }
    return count.n < cap;
  };
  const apply = async (report: DeliveryReport) => {
    const now = clock.now();
    const outcome = await store.reports.apply(report, now, await mayKeep(report.provider, now));
    if (outcome === 'pending') {
      const count = counts.get(report.provider);
      if (count) count.n += 1;
      if (now - lastPurge >= PURGE_EVERY_MS) {
        lastPurge = now;
        await store.reports.purgePending(now - PENDING_REPORT_TTL_MS);
        counts.clear();
      }
    }
    return outcome;
  };
  return {
    apply,
    async report(report) {
      await apply(report);
    },
  };
}
