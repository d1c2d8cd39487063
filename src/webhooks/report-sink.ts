import type { Clock } from '../clock.ts';
import type { DeliveryReport, ReportSink } from '../providers/types.ts';
import type { Store } from '../store/port/index.ts';
import type { ReportOutcome } from '../store/port/reports.ts';

/** A ReportSink that also says what each report did (webhook answers and tests use it). */
export interface StoreReportSink extends ReportSink {
  apply(report: DeliveryReport): Promise<ReportOutcome>;
}

/** Pending reports whose message id was never recorded are dropped after this long. */
export const PENDING_REPORT_TTL_MS = 7 * 24 * 3600_000;
const PURGE_EVERY_MS = 3600_000;

/**
 * The one path every delivery report takes, from a webhook or an SMPP receipt: matched by
 * (provider, provider message id), forward-only, kept pending when the id is not recorded yet.
 * Strays (ids never recorded, e.g. a message sent outside Herald) are purged now and then.
 */
export function createStoreReportSink(store: Pick<Store, 'reports'>, clock: Clock): StoreReportSink {
  let lastPurge = 0;
  const apply = async (report: DeliveryReport) => {
    const now = clock.now();
    const outcome = await store.reports.apply(report, now);
    if (outcome === 'pending' && now - lastPurge >= PURGE_EVERY_MS) {
      lastPurge = now;
      await store.reports.purgePending(now - PENDING_REPORT_TTL_MS);
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
