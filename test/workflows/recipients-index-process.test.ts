// Decision 0064 in `npm start` (SQLite, the engine on the dispatch thread): a trigger's runs are
// listed by recipient over HTTP as soon as the trigger answered 201, then, once no run came for a
// while, the engine has entered every one of them into the recipients' index, once, and the list
// reads the same.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { apiCall } from '../helpers/api-call.ts';
import { startDelayHerald } from '../helpers/delay-herald-process.ts';
import type { HeraldProcess } from '../helpers/herald-process.ts';

const ADMIN = { email: 'admin@example.com', password: 'recipients-index-password-1' };
const PEOPLE = ['p0', 'p1', 'p2', 'p3'];

describe("the recipients' index in npm start (SQLite)", () => {
  let herald: HeraldProcess | undefined;
  after(() => herald?.stop(2000));

  it('lists each run by its recipient from its 201 on, and the engine enters each into the index once', {
    timeout: 120_000,
  }, async () => {
    const started = await startDelayHerald('recipients-index', ADMIN, PEOPLE);
    herald = started.herald;
    const { dataDir, base, token } = started;

    const listOf = async (recipientId: string) => {
      const page = await apiCall(base, token, 'GET', `/workflow-runs?recipientId=${recipientId}&limit=100`);
      assert.equal(page.status, 200, JSON.stringify(page.json));
      return (page.json.items as Array<{ runId: string }>).map((r) => r.runId);
    };
    const made: string[] = [];
    for (let i = 0; i < 6; i++) {
      const answer = await apiCall(base, token, 'POST', '/workflows/later/trigger', { recipients: PEOPLE });
      assert.equal(answer.status, 201, JSON.stringify(answer.json));
      const run = (answer.json.runs as Array<{ recipientId: string; runId: string }>).find(
        (r) => r.recipientId === 'p2',
      );
      made.unshift(run?.runId as string);
      assert.deepEqual(await listOf('p2'), made, `after trigger ${i}`);
    }

    const db = new Database(join(dataDir, 'herald.db'), { readonly: true, fileMustExist: true });
    try {
      const entered = () =>
        db
          .prepare(
            `SELECT count(*) AS entries, count(DISTINCT seq) AS runs, (SELECT up_to FROM workflow_runs_indexed) AS upTo,
               (SELECT max(seq) FROM workflow_runs) AS last FROM workflow_run_recipients`,
          )
          .get() as { entries: number; runs: number; upTo: number; last: number };
      // Idle, the engine looks every HERALD_POLL_MS and enters the runs once none came for a second.
      for (let waited = 0; entered().upTo < entered().last; waited += 100) {
        assert.ok(waited < 60_000, `the runs were not entered: ${JSON.stringify(entered())}`);
        await sleep(100);
      }
      assert.deepEqual(entered(), { entries: 24, runs: 24, upTo: entered().last, last: entered().last });
    } finally {
      db.close();
    }
    assert.deepEqual(await listOf('p2'), made);
  });
});
