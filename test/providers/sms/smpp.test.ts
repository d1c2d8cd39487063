import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../../src/clock.ts';
import { createReportService } from '../../../src/notifications/reports.ts';
import { createSmppProvider } from '../../../src/providers/sms/index.ts';
import type { Provider, SendResult } from '../../../src/providers/types.ts';
import { createSqliteStore } from '../../../src/store/sqlite/index.ts';
import { tempDir } from '../../helpers/config.ts';
import { eventually } from '../../helpers/eventually.ts';
import { type SmppPeer, startSmppPeer } from '../../helpers/peers/smpp.ts';
import { record, seed } from '../../store/reports.suite.ts';
import { never, outgoing, providerDeps } from '../email/deps.ts';

const SOURCE = 'HERALD';
const sms = (to: string, text = 'Your code is 123456') => outgoing('sms', { phone: to }, { text });

function failure(result: SendResult) {
  assert.equal(result.ok, false, `expected a failure, got ${JSON.stringify(result)}`);
  return result as Extract<SendResult, { ok: false }>;
}

describe('SMPP provider', () => {
  let peer: SmppPeer;
  let provider: Provider;
  let harness: ReturnType<typeof providerDeps>;
  const opened: Provider[] = [];
  const open = (url: string, options = {}, deps = providerDeps().deps) => {
    const made = createSmppProvider({ url, sourceAddr: SOURCE }, deps, { bindWaitMs: 3000, ...options });
    opened.push(made);
    return made;
  };

  before(async () => {
    peer = await startSmppPeer({
      systemId: 'herald',
      password: 'secret1',
      submitStatus: { '15550000058': 0x58, '15550000011': 0x0b },
      receipts: {
        '15550000001': 'UNDELIV',
        '15550000002': 'EXPIRED',
        '15550000003': 'REJECTD',
        '15550000004': 'ENROUTE',
        '15550009999': 'none',
      },
    });
    harness = providerDeps();
    provider = open(peer.url(), {}, harness.deps);
  });
  after(async () => {
    await Promise.all(opened.map((p) => p.close?.()));
    await peer.close();
  });

  it('binds as a transceiver and submits with registered_delivery, recording the message_id', async () => {
    const result = await provider.send(sms('+15551234567'), never);
    assert.ok(result.ok);
    const submitted = peer.submitted.at(-1)!;
    assert.equal(result.providerMessageId, submitted.messageId);
    assert.equal(submitted.destinationAddr, '15551234567');
    assert.equal(submitted.destTon, 1);
    assert.equal(submitted.sourceAddr, SOURCE);
    assert.equal(submitted.registeredDelivery, 1);
    assert.equal(submitted.text, 'Your code is 123456');
  });

  it('turns a DELIVRD receipt into a DELIVERED report from the receipt source', async () => {
    const result = await provider.send(sms('+15551230000'), never);
    assert.ok(result.ok);
    await eventually(() => harness.reports.some((r) => r.providerMessageId === result.providerMessageId));
    const report = harness.reports.find((r) => r.providerMessageId === result.providerMessageId)!;
    assert.equal(report.provider, 'smpp');
    assert.equal(report.outcome, 'DELIVERED');
    assert.equal(report.source, 'receipt');
    assert.match(report.detail ?? '', /stat:DELIVRD/);
  });

  for (const [to, stat, outcome] of [
    ['+15550000001', 'UNDELIV', 'FAILED'],
    ['+15550000002', 'EXPIRED', 'FAILED'],
    ['+15550000003', 'REJECTD', 'FAILED'],
    ['+15550000004', 'ENROUTE', 'SENT'],
  ] as const) {
    it(`maps a ${stat} receipt to ${outcome}`, async () => {
      const result = await provider.send(sms(to), never);
      assert.ok(result.ok);
      await eventually(() => harness.reports.some((r) => r.providerMessageId === result.providerMessageId));
      assert.equal(
        harness.reports.find((r) => r.providerMessageId === result.providerMessageId)?.outcome,
        outcome,
      );
    });
  }

  it('treats a throttled submit (0x58) as transient with a pause', async () => {
    const result = failure(await provider.send(sms('+15550000058'), never));
    assert.equal(result.kind, 'transient');
    assert.ok((result.retryAfterMs ?? 0) > 0);
  });

  it('treats an invalid destination (0x0B) as permanent', async () => {
    const result = failure(await provider.send(sms('+15550000011'), never));
    assert.equal(result.kind, 'permanent');
    assert.match(result.detail, /0x0000000b/);
  });

  it('sends a long text in message_payload', async () => {
    const long = 'x'.repeat(400);
    assert.ok((await provider.send(sms('+15551234568', long), never)).ok);
    assert.equal(peer.submitted.at(-1)?.text, long);
  });

  it('reports a refused bind (wrong password) as a configuration error', async () => {
    const { deps, logged } = providerDeps();
    const wrong = open(peer.url('herald', 'wrong-pass'), { bindWaitMs: 300 }, deps);
    await eventually(() => peer.refusedBinds > 0, 10_000, 'a refused bind');
    const result = failure(await wrong.send(sms('+15551234567'), never));
    assert.equal(result.kind, 'config');
    assert.doesNotMatch(JSON.stringify(logged), /wrong-pass/);
  });

  it('keeps the link alive with enquire_link', async () => {
    const before = peer.enquireLinks;
    const chatty = open(peer.url(), { enquireLinkMs: 30 });
    assert.ok((await chatty.send(sms('+15551234569'), never)).ok);
    await eventually(() => peer.enquireLinks >= before + 3, 10_000, 'enquire_link keep-alives');
  });

  it('rebinds after the SMSC drops the connection, and sends again', async () => {
    const before = peer.binds;
    peer.dropConnections();
    await eventually(() => peer.binds > before, 15_000, 'a new bind');
    const result = await provider.send(sms('+15551234570'), never);
    assert.ok(result.ok, JSON.stringify(result));
  });

  it('drops a link whose enquire_link goes unanswered and binds a fresh one', async () => {
    const silent = await startSmppPeer({ systemId: 'herald', password: 'secret1', answerEnquireLink: false });
    const watched = open(silent.url(), { enquireLinkMs: 30, reconnectBaseMs: 10 });
    try {
      await eventually(() => silent.binds >= 2, 15_000, 'a rebind after a dead link');
      await watched.close?.();
    } finally {
      await silent.close();
    }
  });

  it('applies receipts through the store: early, replayed and out of order', async () => {
    const store = createSqliteStore(tempDir());
    const sink = createReportService(store, systemClock);
    const storeProvider = open(peer.url(), {}, { ...providerDeps().deps, reports: sink });
    const id = await seed(store, 'PROCESSING');
    const result = await storeProvider.send(sms('+15550009999'), never);
    assert.ok(result.ok && result.providerMessageId);
    // The receipt beats the worker's completion: kept, then applied when the id is recorded.
    assert.equal(await peer.sendReceipt(result.providerMessageId, 'DELIVRD'), 0);
    assert.equal((await store.notifications.get('t1', id))?.record.status, 'PROCESSING');
    await record(store, id, 'SENT', 'smpp', result.providerMessageId);
    await store.reports.applyPending('smpp', [result.providerMessageId], Date.now());
    // A replay and a late ENROUTE change nothing.
    await peer.sendReceipt(result.providerMessageId, 'DELIVRD');
    await peer.sendReceipt(result.providerMessageId, 'ENROUTE');
    const found = await store.notifications.get('t1', id);
    assert.equal(found?.record.status, 'DELIVERED');
    assert.deepEqual(
      found?.events.map((e) => [e.type, e.source]),
      [
        ['DELIVERED', 'receipt'],
        ['WEBHOOK', 'receipt'],
        ['WEBHOOK', 'receipt'],
      ],
    );
    await storeProvider.close?.();
    await store.close();
  });

  it('answers a receipt it could not store with a temporary error so the SMSC resends it', async () => {
    const failing = open(
      peer.url(),
      {},
      {
        ...providerDeps().deps,
        reports: { report: async () => Promise.reject(new Error('database is locked')) },
      },
    );
    const result = await failing.send(sms('+15550009999'), never);
    assert.ok(result.ok && result.providerMessageId);
    assert.equal(await peer.sendReceipt(result.providerMessageId, 'DELIVRD'), 0x64);
    await failing.close?.();
  });
});
