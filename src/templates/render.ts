import type { Channel, Content } from '../channels.ts';
import type { Store } from '../store/port/index.ts';
import type { TemplateRecord } from '../store/port/templates.ts';
import { LiquidFieldError, type ParsedContent, parseContent, renderParsed } from './liquid.ts';

/**
 * A permanent rendering failure (missing variable, missing template version, bad syntax). The
 * scheduler fails the notification at once, with `message` as the event detail.
 */
export class RenderError extends Error {
  /** The content field that failed (`html`, `subject`...), when one did. */
  readonly field: string | undefined;
  constructor(message: string, field?: string) {
    super(message);
    this.name = 'RenderError';
    this.field = field;
  }
}

/** What rendering one notification reads of it (a NotificationRecord has all of it). */
export interface RenderInput {
  tenant: string;
  channel: Channel;
  templateKey: string | null;
  templateVersion: number | null;
  content: Content | null;
  variables: Record<string, unknown>;
}

/** Renders notifications at processing time, from their pinned template version or inline content. */
export interface Renderer {
  render(notification: RenderInput): Promise<Content>;
}

/** A tiny LRU: Map keeps insertion order, so the first key is the least recently used. */
function lru<V>(max: number) {
  const map = new Map<string, V>();
  return {
    get(key: string): V | undefined {
      const value = map.get(key);
      if (value !== undefined) {
        map.delete(key);
        map.set(key, value);
      }
      return value;
    },
    set(key: string, value: V) {
      map.set(key, value);
      if (map.size > max) map.delete(map.keys().next().value as string);
    },
  };
}

/** Renders one template version with `variables`; throws RenderError (e.g. for preview). */
export function renderTemplate(template: TemplateRecord, variables: Record<string, unknown>): Content {
  return renderWith(parseOrThrow(template.content, describe(template)), variables, describe(template));
}

function describe(t: { key: string; version: number }): string {
  return `template "${t.key}" v${t.version}`;
}

function parseOrThrow(content: Content, what: string): ParsedContent {
  try {
    return parseContent(content);
  } catch (error) {
    if (error instanceof LiquidFieldError) throw new RenderError(`${what}: ${error.message}`, error.field);
    throw error;
  }
}

function renderWith(parsed: ParsedContent, variables: Record<string, unknown>, what: string): Content {
  try {
    return renderParsed(parsed, variables);
  } catch (error) {
    if (error instanceof LiquidFieldError) throw new RenderError(`${what}: ${error.message}`, error.field);
    throw error;
  }
}

/**
 * The renderer the scheduler calls. Template versions are immutable, so parsed versions are cached
 * by (tenant, key, version) for good; inline content is cached by its text, since bulk sends
 * repeat the same content with different variables.
 */
export function createRenderer(store: Store, cacheSize = 1000): Renderer {
  const versions = lru<ParsedContent>(cacheSize);
  const inline = lru<ParsedContent>(cacheSize);
  return {
    async render(n) {
      const variables = n.variables ?? {};
      if (n.templateKey !== null) {
        const version = n.templateVersion;
        if (version === null) throw new RenderError(`template "${n.templateKey}" has no pinned version`);
        const what = describe({ key: n.templateKey, version });
        const cacheKey = `${n.tenant}\u0000${n.templateKey}\u0000${version}`;
        let parsed = versions.get(cacheKey);
        if (!parsed) {
          const template = await store.templates.getVersion(n.tenant, n.templateKey, version);
          if (!template) throw new RenderError(`${what} no longer exists`);
          parsed = parseOrThrow(template.content, what);
          versions.set(cacheKey, parsed);
        }
        return renderWith(parsed, variables, what);
      }
      if (!n.content) throw new RenderError('the notification has neither a template nor content');
      const cacheKey = JSON.stringify(n.content);
      let parsed = inline.get(cacheKey);
      if (!parsed) {
        parsed = parseOrThrow(n.content, 'content');
        inline.set(cacheKey, parsed);
      }
      return renderWith(parsed, variables, 'content');
    },
  };
}
