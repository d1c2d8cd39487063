import { LRUCache } from 'lru-cache';
import type { Channel, Content } from '../channels.ts';
import { ServerSchema } from '../config/schema.ts';
import { type Person, type Priority, priorityRank } from '../notifications/model.ts';
import type { Rank } from '../reserve.ts';
import type { Store } from '../store/port/index.ts';
import type { TemplateContent, TemplateRecord } from '../store/port/templates.ts';
import { inSpan, processContext, tracingOn } from '../tracing/tracer.ts';
import { hasLiquid, type LiquidSource, TEXT_FIELDS } from './fields.ts';
import { closestLocale } from './locale.ts';
import { RenderError, renderBusy } from './render-error.ts';
import { createRenderPool, type RenderPool } from './render-pool.ts';

/** What rendering one notification reads of it (a NotificationRecord has all of it). */
export interface RenderInput {
  /** The notification's id: rendered while it is processed, the render is a child of its `process` span. */
  id?: string;
  tenant: string;
  channel: Channel;
  priority: Priority;
  templateKey: string | null;
  templateVersion: number | null;
  /** The notification's own locale; its recipient's (`recipientLocale`, docs/localization.md) is used without one. */
  locale: string | null;
  recipientLocale?: string | null;
  content: Content | null;
  variables: Record<string, unknown>;
  /** A notification to a person (docs/recipients.md): its templates also see `recipient` and `preferences_url`. */
  person?: Person;
  /**
   * The person's preferences page (`preferencesUrl`), made only when the content has Liquid to
   * run (a literal message needs no link, and a link is a MAC to compute).
   */
  preferencesUrl?: () => Promise<string>;
}

/**
 * The variables a notification renders with: its own, and for a person `recipient` (`id`, `name`,
 * `locale`, `timezone`, `data`) and `preferences_url`, which take the place of variables of
 * those names.
 */
async function variablesOf(n: RenderInput): Promise<Record<string, unknown>> {
  const variables = n.variables ?? {};
  const person = n.person;
  if (person === undefined) return variables;
  const { id, name, locale, timezone, data } = person;
  return {
    ...variables,
    recipient: { id, name, locale, timezone, data },
    preferences_url: n.preferencesUrl ? await n.preferencesUrl() : null,
  };
}

/** A rendered message, and the locale variant it was rendered from (undefined: the template itself). */
export interface Rendered {
  content: Content;
  locale?: string;
}

/** A pinned version as rendering reads it: its fields and its locale variants by tag. */
interface PinnedVersion {
  template: TemplateRecord;
  variants: ReadonlyMap<string, TemplateContent>;
}

/** Renders notifications at processing time, from their pinned template version or inline content. */
/**
 * A source's syntax check: it parses (null); it does not (`lasting`: the same source always
 * fails so, and its verdict may be remembered); or the check could not run (`unavailable`).
 */
export type SyntaxVerdict = null | { error: string; lasting: boolean } | { unavailable: string };

export interface Renderer {
  render(notification: RenderInput): Promise<Rendered>;
  /** Renders one template version with `variables` (POST /templates/{key}/preview). */
  preview(template: TemplateRecord, variables: Record<string, unknown>): Promise<Content>;
  /**
   * Whether each source parses as Liquid, parsed in the pool's threads at priority `rank`, in
   * turns with the tenant's other jobs (syntax-check.ts).
   */
  checkSyntax(tenant: string, rank: Rank, sources: LiquidSource[]): Promise<SyntaxVerdict[]>;
  /** Ends the threads of the pool it was given (not the process's default one). */
  close(): Promise<void>;
}

function describe(t: { key: string; version: number }): string {
  return `template "${t.key}" v${t.version}`;
}

/** Content with no Liquid markup renders as itself: nothing to run, so no thread is needed. */
function literal(content: Content): Content | undefined {
  for (const field of TEXT_FIELDS) {
    const source = content[field];
    if (typeof source === 'string' && hasLiquid(source)) return undefined;
  }
  return content;
}

let sharedPool: RenderPool | undefined;

/**
 * One pool per process, with the configuration's defaults, unless the caller gives its own
 * (main.ts does, from the configuration itself).
 */
function defaultPool(): RenderPool {
  const { renderThreads, renderTimeoutMs } = ServerSchema.properties;
  sharedPool ??= createRenderPool({ threads: renderThreads.default, timeoutMs: renderTimeoutMs.default });
  return sharedPool;
}

/**
 * The renderer the scheduler and the preview route call. Liquid runs in the pool's worker
 * threads (render-pool.ts), within HERALD_RENDER_TIMEOUT_MS for all the fields of one
 * notification together; content without Liquid markup is returned as it is, here. Previews are
 * rendered at NORMAL priority: they never take the threads kept for CRITICAL and HIGH sends.
 */
export function createRenderer(store: Store, given?: RenderPool): Renderer {
  const pool = given ?? defaultPool();
  // Template versions (and so their locale variants) never change: read from the store once.
  const versions = new LRUCache<string, PinnedVersion>({ max: 1000 });
  async function pinned(cacheKey: string, tenant: string, key: string, version: number, what: string) {
    const cached = versions.get(cacheKey);
    if (cached) return cached;
    const template = await store.templates.getVersion(tenant, key, version);
    if (!template) throw new RenderError(`${what} no longer exists`);
    const variants = await store.templates.variants(tenant, [{ key, version }]);
    const found: PinnedVersion = { template, variants: new Map(variants.map((v) => [v.locale, v.content])) };
    versions.set(cacheKey, found);
    return found;
  }
  async function run(
    tenant: string,
    key: string,
    content: Content,
    variables: Record<string, unknown> | (() => Promise<Record<string, unknown>>),
    what: string,
    rank: number,
  ) {
    const plain = literal(content);
    if (plain) return plain;
    // A notification's variables are made only now: a literal message needs none.
    const values = typeof variables === 'function' ? await variables() : variables;
    const outcome = await pool.run({ tenant, key, content, variables: values }, rank);
    if (outcome.ok) return outcome.content;
    if (outcome.busy) throw renderBusy(`${what}: ${outcome.message}`);
    throw new RenderError(`${what}: ${outcome.message}`, outcome.field, outcome.limit);
  }
  /** Renders a notification: a template's pinned version (its closest locale variant), or its own content. */
  async function renderOne(n: RenderInput): Promise<Rendered> {
    const rank = priorityRank(n.priority);
    if (n.templateKey !== null) {
      const version = n.templateVersion;
      if (version === null) throw new RenderError(`template "${n.templateKey}" has no pinned version`);
      const what = describe({ key: n.templateKey, version });
      const key = `${n.tenant}\u0000${n.templateKey}\u0000${version}`;
      const { template, variants } = await pinned(key, n.tenant, n.templateKey, version, what);
      const locale = closestLocale(n, variants);
      if (locale === undefined)
        return { content: await run(n.tenant, key, template.content, () => variablesOf(n), what, rank) };
      const content = variants.get(locale) as TemplateContent;
      return {
        content: await run(
          n.tenant,
          `${key}\u0000${locale}`,
          content,
          () => variablesOf(n),
          `${what} (${locale})`,
          rank,
        ),
        locale,
      };
    }
    if (!n.content) throw new RenderError('the notification has neither a template nor content');
    return {
      content: await run(
        n.tenant,
        JSON.stringify(n.content),
        n.content,
        () => variablesOf(n),
        'content',
        rank,
      ),
    };
  }
  return {
    // A `render` span, child of the notification's `process` span (docs/tracing.md).
    render: (n) =>
      tracingOn()
        ? inSpan(
            'render',
            {
              attributes: {
                'herald.channel': n.channel,
                ...(n.templateKey === null
                  ? {}
                  : {
                      'herald.template.key': n.templateKey,
                      'herald.template.version': n.templateVersion ?? 0,
                    }),
              },
            },
            async (span) => {
              const rendered = await renderOne(n);
              if (rendered.locale !== undefined) span?.setAttribute('herald.locale', rendered.locale);
              return rendered;
            },
            processContext(n.id),
          )
        : renderOne(n),
    preview(template, variables) {
      const key = `${template.tenant}\u0000${template.key}\u0000${template.version}`;
      return run(
        template.tenant,
        key,
        template.content,
        variables,
        describe(template),
        priorityRank('NORMAL'),
      );
    },
    checkSyntax(tenant, rank, sources) {
      return Promise.all(
        sources.map(async (check) => {
          const outcome = await pool.run({ tenant, key: '', content: {}, variables: {}, check }, rank);
          if (outcome.ok) return null;
          if (outcome.busy) return { unavailable: outcome.message };
          // Past the render time or memory: the thread was ended, as a render past it would be.
          // Not a lasting verdict: where a thread cannot read its CPU time (not Linux), one kept
          // off the CPU by load ends the same way.
          if (outcome.limit)
            return {
              error: `it takes longer to parse than rendering may (${outcome.message})`,
              lasting: false,
            };
          // A parse error names its field; a job the pool could not run (closed, not handed to a
          // thread) says nothing about the source.
          return outcome.field === undefined
            ? { unavailable: outcome.message }
            : { error: outcome.message, lasting: true };
        }),
      );
    },
    close: async () => given?.close(),
  };
}
