import { outstanding, queues, requireRoute, setPaused, Unavailable } from '../lib/api.ts';
import { deploy } from '../lib/deploy.ts';
import { fillBacklog } from '../lib/fill.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { measured, type Row } from '../lib/report.ts';
import type { Scenario } from './types.ts';

/**
 * Scenario 6: peak RSS (VmHWM) of the Herald process with the backlog queued. All queues are
 * paused while it fills, so the whole backlog is waiting at once; then they are resumed and the
 * worker runs over the backlog for a while, since a scheduler that loads the backlog into memory
 * would show there. Without the scheduler's admin routes it measures ingest alone.
 */
async function run(options: BenchOptions): Promise<Row[]> {
  const s = options.sizes.memory;
  const herald = await deploy('sqlite');
  const main = herald.processes[0];
  try {
    const { api } = herald;
    const atStart = main?.memory();
    await requireRoute(api, 'POST', '/notifications/batch', { notifications: [] }, 'the batch endpoint');
    const scheduler = await queues(api).then(
      () => true,
      (error) => {
        if (error instanceof Unavailable) return false;
        throw error;
      },
    );
    const paused = scheduler && (await setPaused(api, true));
    const filled = await fillBacklog(api, s.backlog, 'LOW', 'memory backlog');
    const afterFill = main?.memory();
    const waiting = scheduler ? outstanding(await queues(api)) : filled.count;
    let drained = '';
    if (paused) {
      await setPaused(api, false);
      progress(`memory: queues resumed, worker running for ${s.drainSeconds} s over the backlog`);
      await new Promise((resolve) => setTimeout(resolve, s.drainSeconds * 1000));
      drained = `, ${(waiting - outstanding(await queues(api))).toLocaleString('en-US')} delivered in ${s.drainSeconds} s after the resume`;
    }
    const end = main?.memory();
    if (!afterFill || !end) throw new Error('could not read /proc/<pid>/status (Linux only)');
    const how = paused
      ? 'queues paused while filling'
      : scheduler
        ? 'no pause route: worker draining while filling'
        : 'no worker/queue routes yet: ingest only';
    return [
      measured('memory', `peak RSS with ${waiting.toLocaleString('en-US')} queued`, end.peakMb, 'MB', {
        target: { bound: 300, better: 'lower', text: '<= 300 MB' },
        note: `VmHWM of the Herald process; ${how}; RSS ${Math.round(atStart?.currentMb ?? Number.NaN)} MB idle after start-up, ${Math.round(afterFill.currentMb)} MB after filling${drained}, ${Math.round(end.currentMb)} MB at the end`,
      }),
    ];
  } finally {
    await herald.stop();
  }
}

export const memoryScenario: Scenario = {
  name: 'memory',
  title: '6. Memory: peak RSS with the backlog queued',
  run,
};
