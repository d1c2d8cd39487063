import type { Clock } from '../clock.ts';
import type { Store } from '../store/port/index.ts';
import type { ReportOutcome } from '../store/port/reports.ts';

/** A delivery report from a provider (webhook or SMPP receipt), matched by the provider's message id. */
export interface DeliveryReport {
  provider: string;
  providerMessageId: string;
  outcome: 'DELIVERED' | 'FAILED' | 'SENT';
  detail?: string;
  /** When the provider says it happened, epoch ms. */
  at: number;
  source: 'webhook' | 'receipt';
}

/** Where providers hand asynchronous reports (SMPP receipts); webhooks use the same path. */
export interface ReportSink {
  report(report: DeliveryReport): Promise<void>;
}

/** The reports service: a ReportSink that also says what each report did (webhook answers use it). */
export interface ReportService extends ReportSink {
  apply(report: DeliveryReport): Promise<ReportOutcome>;
}

/** Pending reports whose message id was never recorded are dropped after this long. */
const PENDING_REPORT_TTL_MS = 7 * 24 * 3600_000;
const PURGE_EVERY_MS = 3600_000;

/**
 * The one path every delivery report takes, from a webhook or an SMPP receipt: matched by
 * (provider, provider message id), forward-only, kept pending when the id is not recorded yet.
 * Strays (ids never recorded, e.g. a message sent outside Herald) are purged now and then.
 */
export function createReportService(store: Pick<Store, 'reports'>, clock: Clock): ReportService {
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
