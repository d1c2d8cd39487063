import assert from 'node:assert/strict';
import { after, before } from 'node:test';
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
