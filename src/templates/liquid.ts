import {
  type Context,
  type Emitter,
  evalToken,
  ForTag,
  Liquid,
  TablerowTag,
  Tag,
  type TagToken,
  type Template,
  type Token,
  type TopLevelToken,
  TypeGuards,
} from 'liquidjs';
import type { Content } from '../channels.ts';
import { TEXT_FIELDS, type TextField } from './fields.ts';
import { RENDER_LIMITS } from './limits.ts';

// One set of options for both engines. `templates: {}` swaps the file system for an empty
// in-memory map (and include, render and layout are refused anyway, below); the limits bound
// what one template may allocate. Time is bounded outside Liquid: rendering runs in a worker
// thread that is terminated at its deadline (render-pool.ts), since Liquid's own renderLimit
// is checked only between nodes. renderParsed also gives Liquid a cut-off a little before that
// deadline, so most renders that run long stop by themselves and their thread lives on.
const COMMON = {
  templates: {},
  strictVariables: true,
  strictFilters: true,
  ownPropertyOnly: true,
  timezoneOffset: 0,
  // Fixed, so dates render the same on every host; and Liquid then never asks Intl for the
  // host's default locale, which pages in about 5 MB of ICU data at start-up.
  locale: 'en-US',
  parseLimit: 1_000_000,
  memoryLimit: 50_000_000,
} as const;

/**
 * Past a render limit (README, templates): the notification fails permanently and a preview gets 422
 * RENDER_LIMIT, unlike other render errors (a missing variable: 400 at preview).
 */
export class RenderLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenderLimitError';
  }
}

/** Whether `error`, or the error a Liquid error wraps, is a RenderLimitError. */
export function isLimitError(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = (e as { originalError?: unknown }).originalError) {
    if (e instanceof RenderLimitError) return true;
  }
  return false;
}

/** The range a loop's collection spells out literally, as `(a..b)` or `(a..b) | filter`. */
function rangeOf(collection: Token): Token | undefined {
  if (TypeGuards.isRangeToken(collection)) return collection;
  const postfix = (collection as { initial?: { postfix?: Token[] } }).initial?.postfix;
  return postfix?.length === 1 && TypeGuards.isRangeToken(postfix[0]) ? postfix[0] : undefined;
}

/** Refuses a loop over a range of more than RENDER_LIMITS.maxRange items, before it is built. */
function* refuseLongRange(collection: Token, ctx: Context): Generator<unknown, void, unknown> {
  const range = rangeOf(collection);
  if (!range || !TypeGuards.isRangeToken(range)) return;
  const low = Number(yield evalToken(range.lhs, ctx));
  const high = Number(yield evalToken(range.rhs, ctx));
  const items = high - low + 1;
  if (items > RENDER_LIMITS.maxRange) {
    throw new RenderLimitError(`a loop over ${items} items is over the limit of ${RENDER_LIMITS.maxRange}`);
  }
}

class BoundedFor extends ForTag {
  // biome-ignore lint/suspicious/noConfusingVoidType: the signature of liquidjs's ForTag.render
  override *render(ctx: Context, emitter: Emitter): Generator<unknown, void | string, Template[]> {
    yield* refuseLongRange(this.collection, ctx) as Generator<unknown, void, Template[]>;
    return yield* super.render(ctx, emitter);
  }
}

class BoundedTablerow extends TablerowTag {
  override *render(ctx: Context, emitter: Emitter): Generator<unknown, void, unknown> {
    yield* refuseLongRange(this.collection, ctx);
    yield* super.render(ctx, emitter);
  }
}

/** `include`, `render` and `layout` pull in other templates: refused when a template is parsed (saved). */
class RefusedTag extends Tag {
  constructor(token: TagToken, remain: TopLevelToken[], liquid: Liquid) {
    super(token, remain, liquid);
    throw new Error(`the ${token.name} tag is not allowed`);
  }
  render(): void {}
}

function engine(options: ConstructorParameters<typeof Liquid>[0]): Liquid {
  const liquid = new Liquid(options);
  liquid.registerTag('for', BoundedFor);
  liquid.registerTag('tablerow', BoundedTablerow);
  for (const name of ['include', 'render', 'layout']) liquid.registerTag(name, RefusedTag);
  return liquid;
}

/** Plain-text fields (subject, text, SMS, push): output as written, since escaping would show `&amp;`. */
const textEngine = engine(COMMON);
/** The html field: every `{{ }}` output is HTML-escaped unless the author writes `| raw`. */
const htmlEngine = engine({ ...COMMON, outputEscape: 'escape' });

/** Parsed fields, ready to render many times. */
export type ParsedContent = Partial<Record<TextField, Template[]>> & { data?: Record<string, unknown> };

function engineFor(field: TextField): Liquid {
  return field === 'html' ? htmlEngine : textEngine;
}

/** Parses every Liquid field of `content`; throws the engine's error (with line and column) on bad syntax. */
export function parseContent(content: Content): ParsedContent {
  const parsed: ParsedContent = {};
  for (const field of TEXT_FIELDS) {
    const source = content[field];
    if (typeof source === 'string') parsed[field] = parseField(field, source);
  }
  if (content.data !== undefined) parsed.data = content.data;
  return parsed;
}

function parseField(field: TextField, source: string): Template[] {
  try {
    return engineFor(field).parse(source);
  } catch (error) {
    throw new LiquidFieldError(field, (error as Error).message);
  }
}

/** A parse or render failure of one field. */
export class LiquidFieldError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'LiquidFieldError';
    this.field = field;
  }
}

/**
 * Why `source` does not parse as Liquid for `field` (the engine's message, with line and
 * column), or null when it parses. Called in the render threads only (syntax-check.ts): a
 * parse costs about a millisecond per KB, which must not fall on a request's event loop.
 */
export function syntaxProblem(field: TextField, source: string): string | null {
  try {
    engineFor(field).parse(source);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Renders reached their time cut-off (renderParsed's `cutAt`). */
class RenderTimeCut extends RenderLimitError {}

/** The CPU time a render may take, and the clock of the thread it runs on (render-jobs.ts). */
export interface CpuBudget {
  ms: number;
  /** Milliseconds the thread has run on a CPU; undefined where it cannot be read. */
  clock(): number | undefined;
}

/**
 * Renders parsed fields with `variables`; a missing variable throws LiquidFieldError naming the
 * field, a limit (range, output size, or the time cut-off `cutAt`, on performance.now()'s clock,
 * for all fields together) a RenderLimitError.
 *
 * The cut-off is wall-clock time, the only clock Liquid checks. With `cpu`, a render cut before
 * its thread has had `cpu.ms` on a CPU was kept off it (busy cores; bulk render threads run at a
 * lower priority), not long: it is rendered again, its cut-off moved to when the thread, at the
 * share of the CPU it got so far, will have had half the rest of its budget (half: a share that
 * grows meanwhile must not carry the render past the pool's own deadline, 4/3 of the budget).
 * A render that used its budget is cut as before; one kept off the CPU for long is ended by the
 * pool (render-pool.ts).
 */
export function renderParsed(
  parsed: ParsedContent,
  variables: Record<string, unknown>,
  cutAt = Number.POSITIVE_INFINITY,
  cpu?: CpuBudget,
): Content {
  const startedAt = performance.now();
  const cpuAtStart = cpu?.clock();
  for (let until = cutAt; ; ) {
    try {
      return renderFields(parsed, variables, until);
    } catch (error) {
      if (!(error instanceof RenderTimeCut) || cpuAtStart === undefined) throw error;
      const cpuNow = cpu?.clock();
      if (cpu === undefined || cpuNow === undefined) throw error;
      const had = cpuNow - cpuAtStart;
      if (had >= cpu.ms) throw error;
      const now = performance.now();
      const share = Math.max(had, 0.1) / Math.max(now - startedAt, 1);
      until = now + (cpu.ms - had) / share / 2;
    }
  }
}

function renderFields(parsed: ParsedContent, variables: Record<string, unknown>, cutAt: number): Content {
  const out: Content = {};
  let bytes = 0;
  const overTime = (field: string) => new RenderTimeCut(`${field}: rendering ran out of time`);
  for (const field of TEXT_FIELDS) {
    const templates = parsed[field];
    if (!templates) continue;
    const renderLimit = cutAt - performance.now();
    if (renderLimit <= 0) throw overTime(field);
    let text: string;
    try {
      text = String(engineFor(field).renderSync(templates, variables, { renderLimit }));
    } catch (error) {
      if (isLimitError(error)) throw new RenderLimitError(`${field}: ${(error as Error).message}`);
      if (performance.now() >= cutAt) throw overTime(field);
      throw new LiquidFieldError(field, (error as Error).message);
    }
    bytes += Buffer.byteLength(text);
    if (bytes > RENDER_LIMITS.outputBytes) {
      throw new RenderLimitError(`the rendered fields are over ${RENDER_LIMITS.outputBytes / 1024} KiB`);
    }
    out[field] = text;
  }
  if (parsed.data !== undefined) out.data = parsed.data;
  return out;
}
