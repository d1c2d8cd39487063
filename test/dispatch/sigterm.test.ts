import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { tempDir } from '../helpers/config.ts';
import {
  type HeraldProcess,
  oneProcessEnv,
  passwordLogin,
  startHeraldProcess,
} from '../helpers/herald-process.ts';

const ADMIN = { email: 'admin@example.com', password: 'sigterm-test-password-1' };

describe('SIGTERM', () => {
  let proc: HeraldProcess | undefined;
  after(async () => {
    await proc?.stop(2000);
  });

  it('stops claiming, finishes quick sends, gives slow ones back, and exits', {
    timeout: 60_000,
  }, async () => {
    const dataDir = tempDir('herald-sigterm-');
    proc = await startHeraldProcess(
      'sigterm',
      oneProcessEnv(dataDir, ADMIN, { HERALD_SANDBOX_FAILURES: 'true' }),
    );
    const api = proc.apiUrl as string;
    const token = await passwordLogin(api, ADMIN);
    const notification = (local: string) => ({
      channel: 'email',
      recipient: { email: `${local}@example.com` },
      content: { subject: 'Hi', text: 'Bye' },
    });
    const batch = await fetch(`${api}/notifications/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        notifications: [
          ...Array.from({ length: 5 }, () => notification('delay-60000')),
          ...Array.from({ length: 5 }, (_, i) => notification(`quick-${i}`)),
        ],
      }),
    });
    assert.equal(batch.status, 207);
    const db = new Database(join(dataDir, 'herald.db'), { readonly: true });
    const count = (sql: string) => db.prepare(sql).pluck().get() as number;
    const leased = () => count("SELECT COUNT(*) FROM notifications WHERE queue_state = 'leased'");
    const delivered = () => count("SELECT COUNT(*) FROM notifications WHERE status = 'DELIVERED'");
    // Wait until the quick ones are delivered and the slow ones are in flight.
    for (let i = 0; i < 400 && (leased() < 5 || delivered() < 5); i++) await sleep(25);
    assert.equal(leased(), 5);
    const started = Date.now();
    proc.child.kill('SIGTERM');
    assert.equal(await proc.exited, 0);
    proc = undefined;
    // The slow sends were given back (not left leased for the reaper) without using an attempt.
    assert.ok(Date.now() - started < 20_000);
    assert.equal(count("SELECT COUNT(*) FROM notifications WHERE queue_state = 'leased'"), 0);
    assert.equal(count("SELECT COUNT(*) FROM notifications WHERE status = 'DELIVERED'"), 5);
    assert.equal(
      count(
        "SELECT COUNT(*) FROM notifications WHERE status = 'RETRYING' AND attempts = 0 AND queue_state = 'ready'",
      ),
      5,
    );
    db.close();
  });
});
