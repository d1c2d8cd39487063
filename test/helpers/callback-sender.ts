import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import pino from 'pino';
import {
  type CallbackSender,
  type CallbackSenderDeps,
  startCallbackSender,
} from '../../src/callbacks/sender.ts';
import { systemClock } from '../../src/clock.ts';
import type { Status } from '../../src/notifications/model.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from './config.ts';
import { type CallbackReceiver, startCallbackReceiver } from './peers/callback-receiver.ts';

/**
 * What a test of the callback sender alone runs against: a SQLite store and a real HTTPS
 * receiver, opened before the suite and closed after it (read them inside the tests).
 */
export function senderPeers(): { store: ReturnType<typeof createSqliteStore>; receiver: CallbackReceiver } {
  const peers = {} as { store: ReturnType<typeof createSqliteStore>; receiver: CallbackReceiver };
  before(async () => {
    peers.store = createSqliteStore(tempDir());
    peers.receiver = await startCallbackReceiver();
  });
  after(async () => {
    await peers.receiver.close();
    await peers.store.close();
  });
  return peers;
}

/** Registers callback `id` of `tenant` straight in the store, posting to `/<id>` on the receiver, from the log's head on. */
export async function registerCallback(
  peers: ReturnType<typeof senderPeers>,
  id: string,
  tenant: string,
  events: Status[] = ['DELIVERED'],
): Promise<void> {
  const created = await peers.store.callbacks.create(
    {
      id,
      tenant,
      url: `${peers.receiver.origin}/${id}`,
      events,
      secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}`,
      previousSecret: null,
      rotatedAt: null,
      disabledAt: null,
      disabledReason: null,
      createdAt: Date.now(),
    },
    await peers.store.statusLog.head(),
    20,
  );
  assert.equal(created, true);
}

/** The sender against the peers: 4 in flight and 100 a second a callback unless `options` say otherwise. */
export function startSender(
  peers: ReturnType<typeof senderPeers>,
  options: Partial<CallbackSenderDeps> = {},
): CallbackSender {
  return startCallbackSender({
    callbacks: peers.store.callbacks,
    statusLog: peers.store.statusLog,
    clock: systemClock,
    log: pino({ level: 'silent' }),
    allowedHosts: [peers.receiver.host],
    concurrency: 4,
    ratePerSecond: 100,
    ...options,
  });
}
