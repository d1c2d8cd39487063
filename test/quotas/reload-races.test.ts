// A quota change answered by one api process is not undone by that process's periodic reload
// whose list of quotas was read before the change (docs/quotas.md, Across processes): two gates on
// one real PostgreSQL, as two api processes, one of whose reloads the test holds between reading
// the list and applying it. Issue 53: a PUT dropped so, and the process accepted without a limit.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import { createQuotaGate, type QuotaGate, type QuotaItem } from '../../src/quotas/gate.ts';
import { tokenSource } from '../../src/quotas/sources.ts';
import type { QuotaStore } from '../../src/store/port/quotas.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

const BURST = 10;
const LIMITS = { total: { ratePerSecond: 1, burst: BURST } };
const CRITICAL_EMAIL: QuotaItem = { channel: 'email', rank: 0 };

function deferred() {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('quota reloads racing changes (postgres)', () => {
  // Frozen: the buckets never refill, so the burst is all that may be accepted.
  const clock = manualClock(Date.UTC(2026, 5, 1, 12));
  const stores: Array<Awaited<ReturnType<typeof createPostgresStore>>> = [];
  const gates: QuotaGate[] = [];
  let url: string;
  let tenant = '';
  let n = 0;

  before(async () => {
    url = await (await sharedPostgres()).createDatabase('herald_quota_races');
  });
  beforeEach(() => {
    tenant = `race${++n}`;
  });
  after(async () => {
    for (const gate of gates.splice(0)) await gate.close();
    for (const store of stores.splice(0)) await store.close();
    await stopSharedPostgres();
  });

  /** A process's gate on its own connections; `held` is one whose reloads the test can hold. */
  const startApi = async () => {
    const store = await createPostgresStore(url);
    stores.push(store);
    let hold: ReturnType<typeof deferred> | undefined;
    let listed = deferred();
    const quotas: QuotaStore = {
      ...store.quotas,
      async list() {
        const records = await store.quotas.list();
        const held = hold;
        if (held) {
          listed.resolve();
          await held.promise;
        }
        return records;
      },
    };
    const gate = createQuotaGate({ store: quotas, clock, source: tokenSource(store.quotas, clock) });
    await gate.start();
    gates.push(gate);
    return {
      gate,
      /** Resolves once a periodic reload has read the list, holding it there. */
      async holdReload() {
        hold = deferred();
        listed = deferred();
        await listed.promise;
      },
      /** Lets the held reload go on; resolves once it ended (the next one is held). */
      async releaseReload() {
        const held = hold as ReturnType<typeof deferred>;
        hold = deferred();
        listed = deferred();
        held.resolve();
        await listed.promise;
      },
      stop() {
        hold?.resolve();
        hold = undefined;
      },
    };
  };

  const admitted = async (gate: QuotaGate, count: number) =>
    (
      await gate.admit(
        tenant,
        Array.from({ length: count }, () => CRITICAL_EMAIL),
      )
    ).admitted.filter(Boolean).length;

  it('keeps a quota set in this process while a reload that listed before it ends', async () => {
    const api = await startApi();
    try {
      await api.holdReload();
      await api.gate.put(tenant, LIMITS);
      await api.releaseReload();
      assert.notDeepEqual(api.gate.headers(tenant), {}, 'the reload dropped the quota just set');
      const accepted = await admitted(api.gate, 2 * BURST);
      assert.ok(accepted <= BURST, `${accepted} accepted, burst ${BURST}`);
    } finally {
      api.stop();
    }
  });

  it('keeps a quota another process set and a GET applied here, while a reload that listed before it ends', async () => {
    const [first, second] = [await startApi(), await startApi()];
    try {
      await second.holdReload();
      await first.gate.put(tenant, LIMITS);
      assert.ok(await second.gate.view(tenant), 'the second process reads the quota');
      await second.releaseReload();
      const accepted = (await admitted(first.gate, 2 * BURST)) + (await admitted(second.gate, 2 * BURST));
      assert.ok(accepted <= BURST, `${accepted} accepted by both, burst ${BURST}`);
    } finally {
      first.stop();
      second.stop();
    }
  });

  it('does not bring back a quota removed in this process by a reload that listed before the removal', async () => {
    const api = await startApi();
    try {
      await api.gate.put(tenant, LIMITS);
      await api.holdReload();
      assert.equal(await api.gate.remove(tenant), true);
      await api.releaseReload();
      assert.deepEqual(api.gate.headers(tenant), {}, 'the reload applied the removed quota again');
      assert.equal(await admitted(api.gate, 2 * BURST), 2 * BURST);
    } finally {
      api.stop();
    }
  });
});
