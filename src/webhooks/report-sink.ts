import type { Clock } from '../clock.ts';
import type { DeliveryReport, ReportSink } from '../providers/types.ts';
import type { Store } from '../store/port/index.ts';
import type { ReportOutcome } from '../store/port/reports.ts';

/** A ReportSink that also says what each report did (webhook answers and tests use it). */
export interface StoreReportSink extends ReportSink {
  apply(report: DeliveryReport): Promise<ReportOutcome>;
}

/**
 * The one path every delivery report takes, from a webhook or an SMPP receipt: matched by
 * (provider, provider message id), forward-only, kept pending when the id is not recorded yet.
 */
export function createStoreReportSink(store: Pick<Store, 'reports'>, clock: Clock): StoreReportSink {
  const apply = (report: DeliveryReport) => store.reports.apply(report, clock.now());
  return {
    apply,
    async report(report) {
      await apply(report);
    },
  };
}
