import { lowerOwnPriority } from '../os-thread.ts';

/**
 * The entry of a render worker thread (render-pool.ts). On Linux the nice value is per thread:
 * this one steps back to nice 10 so that, when the cores are busy, the event loops serving
 * requests and running the scheduler get the CPU before Liquid. It does so before it loads Liquid
 * and the job loop (render-jobs.ts): loading is most of what a new thread costs, and a thread
 * started after another was terminated must not take that CPU from them either.
 */
lowerOwnPriority(10);
await import('./render-jobs.ts');
