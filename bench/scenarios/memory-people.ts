import { outstanding, queues, setPaused } from '../lib/api.ts';
import { deploy } from '../lib/deploy.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { measured, type Row } from '../lib/report.ts';
import { tempDir } from '../lib/tmp.ts';
import { seedSqlite, TOPIC, waitDone } from './fan-out.ts';
import type { Scenario } from './types.ts';

/**
 * #50: peak RSS (VmHWM) of `npm start` with `--memory-backlog` recipients and as many notifications to
 * them queued. The recipients and a topic of all of them are seeded in the SQLite file; with every
 * queue paused, a LOW broadcast to the topic queues one notification per recipient (`{ id }`,
 * resolved when processed); then the queues resume and the worker runs over the backlog for a
 * while, so that a claim loading recipients or the backlog into memory would show.
 */
async function run(options: BenchOptions): Promise<Row[]> {
  const { backlog: subscribers, drainSeconds } = options.sizes.memory;
  const dataDir = tempDir('memory-people');
  const first = await deploy('sqlite', { dataDir });
  await first.stop();
  progress(`memory-people: seeding ${subscribers.toLocaleString('en-US')} recipients and subscribers`);
  seedSqlite(dataDir, subscribers);
  const herald = await deploy('sqlite', { dataDir });
  const main = herald.processes[0];
  try {
    const { api } = herald;
    const idle = main?.memory();
    if (!(await setPaused(api, true))) throw new Error('memory-people needs POST /admin/queues/pause');
    const accepted = await api.request('POST', '/broadcasts', {
      topic: TOPIC,
      channel: 'email',
      priority: 'LOW',
      content: { subject: 'News for {{ recipient.id }}', text: 'Hello' },
    });
    if (accepted.status !== 201)
      throw new Error(`POST /broadcasts: ${accepted.status} ${JSON.stringify(accepted.body)}`);
    const id = (accepted.body as { broadcastId: string }).broadcastId;
    await waitDone(api, id, Date.now());
    const queued = outstanding(await queues(api));
    const afterFanOut = main?.memory();
    await setPaused(api, false);
    progress(`memory-people: queues resumed, worker running for ${drainSeconds} s over the backlog`);
    await new Promise((resolve) => setTimeout(resolve, drainSeconds * 1000));
    const drained = queued - outstanding(await queues(api));
    const end = main?.memory();
    if (!idle || !afterFanOut || !end) throw new Error('could not read /proc/<pid>/status (Linux only)');
    const n = subscribers.toLocaleString('en-US');
    return [
      measured(
        'memory-people',
        `peak RSS with ${n} recipients and ${queued.toLocaleString('en-US')} queued to them`,
        end.peakMb,
        'MB',
        {
          target: { bound: 400, better: 'lower', text: '<= 400 MB' },
          note: `VmHWM of npm start's process; RSS ${Math.round(idle.currentMb)} MB idle with the recipients seeded, ${Math.round(afterFanOut.currentMb)} MB after the fan-out (queues paused), ${Math.round(end.currentMb)} MB after ${drained.toLocaleString('en-US')} delivered in ${drainSeconds} s`,
        },
      ),
    ];
  } finally {
    await herald.stop();
  }
}

export const memoryPeopleScenario: Scenario = {
  name: 'memory-people',
  title: '#50. Memory: peak RSS with 1,000,000 recipients and 1,000,000 queued to them',
  run,
};
