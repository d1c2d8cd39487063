// The reports service keeps at most `cap` unmatched reports per provider (API.md §7: 100,000 by
// default): past it an unmatched report is answered `dropped` and not kept; other providers and
// matched reports are not affected.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import type { DeliveryReport } from '../../src/notifications/delivery-report.ts';
import { createReportService } from '../../src/notifications/reports.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';

describe('pending report cap', () => {
  const store = createSqliteStore(tempDir());
  after(() => store.close());

  it('drops unmatched reports past the cap, per provider', async () => {
    const reports = createReportService(store, manualClock(), 2);
    const unmatched = (provider: string, id: string): DeliveryReport => ({
      provider,
      providerMessageId: id,
      outcome: 'DELIVERED',
      at: 1,
      source: 'webhook',
    });
    const outcomes = [];
    for (const id of ['a', 'b', 'c']) outcomes.push(await reports.apply(unmatched('smtp', id)));
    outcomes.push(await reports.apply(unmatched('twilio', 'a')));
    assert.deepEqual(outcomes, ['pending', 'pending', 'dropped', 'pending']);
    assert.equal(await store.reports.pendingCount('smtp'), 2);
  });
});
