import { parentPort } from 'node:worker_threads';
import type { Content } from '../channels.ts';
import { osThreadId, threadCpu } from '../os-thread.ts';
import { openLine } from '../thread-calls.ts';
import { type LiquidSource, sourceText } from './fields.ts';
import {
  LiquidFieldError,
  type ParsedContent,
  parseContent,
  RenderLimitError,
  renderParsed,
  syntaxProblem,
} from './liquid.ts';
import type { RenderOutcome, RenderPoolCalls, RenderThreadCalls, ThreadJob } from './render-pool.ts';

/**
 * The body of a render worker thread: parses (with a cache: template versions never change, bulk
 * content repeats) and renders one job at a time, answering with the content or why it failed;
 * or, for a syntax check, only parses.
 * Liquid stops by itself at the job's cut-off, a little before the deadline at which the pool
 * ends the thread (the hard bound, for whatever Liquid does not check between its nodes): a
 * thread that lives on costs nothing, a new one costs tens of milliseconds of CPU to load.
 */
const port = parentPort;
if (!port) throw new Error('render-jobs.ts runs in a render worker thread (render-thread.ts)');

/** This thread's own CPU clock (Linux), which tells a render kept off the CPU from a long one. */
const ownCpu = threadCpu(osThreadId());
const ownCpuMs = () => ownCpu?.ms();

const parsedCache = new Map<string, ParsedContent>();
const CACHE_SIZE = 1000;

function parsedOf(key: string, content: Content): ParsedContent {
  let parsed = parsedCache.get(key);
  if (parsed) {
    parsedCache.delete(key);
  } else {
    parsed = parseContent(content);
  }
  parsedCache.set(key, parsed);
  if (parsedCache.size > CACHE_SIZE) parsedCache.delete(parsedCache.keys().next().value as string);
  return parsed;
}

/** A syntax check: whether the source parses, or the engine's message. */
function check({ field, source }: LiquidSource): RenderOutcome {
  const problem = syntaxProblem(field, sourceText(source));
  return problem === null ? { ok: true, content: {} } : { ok: false, limit: false, message: problem, field };
}

function run(job: ThreadJob): RenderOutcome {
  if (job.check) return check(job.check);
  const cutAt = job.cutAt - performance.timeOrigin;
  try {
    const cpu = { ms: job.cpuMs, clock: ownCpuMs };
    return { ok: true, content: renderParsed(parsedOf(job.key, job.content), job.variables, cutAt, cpu) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof RenderLimitError) return { ok: false, limit: true, message };
    const field = error instanceof LiquidFieldError ? error.field : undefined;
    return { ok: false, limit: false, message, field };
  }
}

const pool = openLine<RenderPoolCalls, RenderThreadCalls>(port, { render: run });
// Warm up before taking jobs: the first render of a fresh thread pays for lazy loading and
// compilation, which must not count against a notification's deadline.
run({
  cutAt: Number.POSITIVE_INFINITY,
  cpuMs: Number.POSITIVE_INFINITY,
  key: '\u0000warm-up',
  content: { subject: 'Hi {{ name }}', html: '{% for i in (1..3) %}<b>{{ name | upcase }}</b>{% endfor %}' },
  variables: { name: 'warm' },
});
parsedCache.clear();
pool.tell('ready', osThreadId());
