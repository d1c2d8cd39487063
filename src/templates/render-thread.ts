import { workerData } from 'node:worker_threads';
import { lowerOwnPriority, nameOwnThread } from '../os-thread.ts';
import type { RenderThreadData } from './render-pool.ts';

/**
 * The entry of a render worker thread (render-pool.ts). On Linux the nice value is per thread:
 * a bulk thread steps back to the nice value the pool gives it so that, when the cores are busy,
 * the event loops serving requests and running the scheduler, and the threads kept for CRITICAL
 * and HIGH renders, get the CPU before it. It does so before it loads Liquid and the job loop
 * (render-jobs.ts): loading is most of what a new thread costs, and a thread started after
 * another was terminated must not take that CPU from them either.
 */
const { nice } = workerData as RenderThreadData;
nameOwnThread('herald-render');
if (nice > 0) lowerOwnPriority(nice);
await import('./render-jobs.ts');
