import { Liquid, type Template } from 'liquidjs';
import type { Content } from '../channels.ts';
import type { FieldError } from '../errors.ts';

// One set of options for both engines. `templates: {}` swaps the file system for an empty
// in-memory map, so `{% include '/etc/passwd' %}` finds nothing; the limits bound what one
// template may cost (a loop over 1..1e9 stops at the render limit instead of pinning a core).
const COMMON = {
  templates: {},
  strictVariables: true,
  strictFilters: true,
  ownPropertyOnly: true,
  timezoneOffset: 0,
  parseLimit: 1_000_000,
  renderLimit: 1_000,
  memoryLimit: 50_000_000,
} as const;

/** Plain-text fields (subject, text, SMS, push): output as written, since escaping would show `&amp;`. */
const textEngine = new Liquid(COMMON);
/** The html field: every `{{ }}` output is HTML-escaped unless the author writes `| raw`. */
const htmlEngine = new Liquid({ ...COMMON, outputEscape: 'escape' });

/** The Liquid source fields a template or inline content may carry. */
export const TEXT_FIELDS = ['subject', 'text', 'html', 'title', 'body'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];

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

/** Syntax problems of every field, as field errors under `prefix` (e.g. `body/content`); empty when all parse. */
export function syntaxErrors(content: Content, prefix: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of TEXT_FIELDS) {
    const source = content[field];
    // Most inline content has no Liquid at all; skipping the parse keeps batch ingest cheap.
    if (typeof source !== 'string' || !/{[{%]/.test(source)) continue;
    const problem = syntaxProblem(field, source);
    if (problem !== null)
      errors.push({ path: `${prefix}/${field}`, message: `Liquid syntax error: ${problem}` });
  }
  return errors;
}

// Bulk sends repeat the same inline content with different variables: remember each source's
// verdict so a 1000-item batch parses it once (parsing was ~8% of batch ingest CPU).
const verdicts = new Map<string, string | null>();
const MAX_VERDICTS = 2000;

function syntaxProblem(field: TextField, source: string): string | null {
  const key = `${field === 'html' ? 'h' : 't'}${source}`;
  const known = verdicts.get(key);
  if (known !== undefined) return known;
  let problem: string | null = null;
  try {
    engineFor(field).parse(source);
  } catch (error) {
    problem = (error as Error).message;
  }
  if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
  if (source.length <= 10_000) verdicts.set(key, problem);
  return problem;
}

/** Renders parsed fields with `variables`; a missing variable throws LiquidFieldError naming the field. */
export function renderParsed(parsed: ParsedContent, variables: Record<string, unknown>): Content {
  const out: Content = {};
  for (const field of TEXT_FIELDS) {
    const templates = parsed[field];
    if (!templates) continue;
    try {
      out[field] = String(engineFor(field).renderSync(templates, variables));
    } catch (error) {
      throw new LiquidFieldError(field, (error as Error).message);
    }
  }
  if (parsed.data !== undefined) out.data = parsed.data;
  return out;
}
