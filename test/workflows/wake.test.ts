// #52 (decision 0036): a trigger wakes the workflow engine of `npm start` (SQLite, the engine in
// the dispatch thread) instead of leaving its runs to the engine's next poll. The poll is set to
// its longest (60 s) and each run's send must be delivered well before it: two triggers one after
// the other, so that a poll tick cannot carry both (the second would wait a whole poll).
// PostgreSQL's wake across processes (NOTIFY): test/workflows/workers.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiCall } from '../helpers/api-call.ts';
import { tempDir } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  type HeraldProcess,
  oneProcessEnv,
  passwordLogin,
  startHeraldProcess,
} from '../helpers/herald-process.ts';

const ADMIN = { email: 'admin@example.com', password: 'workflow-wake-password-1' };
/** HERALD_POLL_MS at its bound: without a wake, a trigger's run waits up to this. */
const POLL_MS = 60_000;
/** How long a woken run may take to be delivered: generous, yet well under the poll. */
const WOKEN_MS = 25_000;

describe('a trigger on npm start (SQLite)', () => {
  let herald: HeraldProcess;
  let base: string;
  let token: string;
  before(async () => {
    herald = await startHeraldProcess(
      'workflow-wake',
      oneProcessEnv(tempDir('herald-workflow-wake-'), ADMIN, { HERALD_POLL_MS: String(POLL_MS) }),
    );
    base = herald.apiUrl as string;
    token = await passwordLogin(base, ADMIN);
  });
  after(() => herald?.stop(2000));

  it('starts its run at once: the send is delivered without waiting for the poll', {
    timeout: 120_000,
  }, async () => {
    const call = (method: string, path: string, body?: object) => apiCall(base, token, method, path, body);
    assert.equal((await call('PUT', '/recipients/u1', {})).status, 201);
    const saved = await call('PUT', '/workflows/hello', {
      steps: [{ type: 'send', channel: 'inapp', content: { title: 'Hi', body: 'Hello' } }],
    });
    assert.equal(saved.status, 201, JSON.stringify(saved.json));
    for (const n of [1, 2]) {
      const triggered = await call('POST', '/workflows/hello/trigger', { recipients: ['u1'] });
      assert.equal(triggered.status, 201, JSON.stringify(triggered.json));
      const runId = triggered.json.runs[0].runId as string;
      let notificationId: string | undefined;
      await eventually(
        async () => {
          const run = (await call('GET', `/workflow-runs/${runId}`)).json;
          notificationId = run.status === 'COMPLETED' ? run.steps[0].notificationId : undefined;
          if (!notificationId) return false;
          return (await call('GET', `/notifications/${notificationId}`)).json.status === 'DELIVERED';
        },
        WOKEN_MS,
        `trigger ${n}'s run to complete and its send to be delivered before the ${POLL_MS} ms poll`,
        50,
      );
    }
  });
});
