import { Type } from '@sinclair/typebox';
import { CHANNELS, type Channel } from '../channels.ts';
import { iso } from '../clock.ts';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { exampleOf, withExample } from '../http/examples.ts';
import { PageSchema, pageOf, textCursor } from '../http/page.ts';
import { literals } from '../http/schema.ts';
import type { RouteModule } from '../http/types.ts';
import { priorityRank } from '../notifications/model.ts';
import { payloadErrors } from '../notifications/payload.ts';
import { CategoryName, ContentView } from '../notifications/schemas.ts';
import type { TemplateRecord, TemplateVariant } from '../store/port/templates.ts';
import { liquidSources } from './fields.ts';
import { TEMPLATE_KEY, TemplateKey } from './key.ts';
import { canonicalLocale, LOCALE_MESSAGE, LocaleTag } from './locale.ts';
import type { Renderer } from './render.ts';
import { RenderError } from './render-error.ts';
import type { SyntaxCheck } from './syntax-check.ts';
import { contentOf, templateErrors } from './validate.ts';

const Source = Type.String({ maxLength: 100_000 });
const Fields = {
  subject: Type.Optional(Source),
  text: Type.Optional(Source),
  html: Type.Optional(Source),
  title: Type.Optional(Source),
  body: Type.Optional(Source),
  url: Type.Optional(Source),
  data: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description:
        "inapp only: any JSON object, stored as given (no Liquid) with each message, as inline content's `data` is.",
    }),
  ),
};
const ChannelSchema = literals(CHANNELS);
const strict = { additionalProperties: false } as const;
/** The password-reset template of docs/sending.md, the examples' template throughout. */
const FIELDS_EXAMPLE = {
  subject: 'Reset your password, {{ name }}',
  text: 'Hi {{ name }}, reset it here: {{ link }}',
  html: '<p>Hi {{ name }},</p><p><a href="{{ link }}">Reset your password</a></p>',
};
const SAMPLE_EXAMPLE = { name: 'Ada', link: 'https://example.com/r?t=1' };
const Variables = Type.Record(Type.String(), Type.Unknown());
const SampleVariables = Type.Optional(
  Type.Record(Type.String(), Type.Unknown(), {
    description:
      'Variables the editor previews the template with, saved with the version; a PUT without them keeps the current ones.',
  }),
);
const DEFAULT_CATEGORY =
  'The category of a notification that names this template and no category of its own (docs/preferences.md).';
const CreateBody = withExample(
  Type.Object(
    {
      key: TemplateKey,
      channel: ChannelSchema,
      ...Fields,
      sampleVariables: SampleVariables,
      category: Type.Optional({ ...CategoryName, description: DEFAULT_CATEGORY }),
    },
    strict,
  ),
  {
    key: 'password-reset',
    channel: 'email',
    ...FIELDS_EXAMPLE,
    sampleVariables: SAMPLE_EXAMPLE,
    category: 'security',
  },
);
const UpdateBody = withExample(
  Type.Object(
    {
      channel: Type.Optional(ChannelSchema),
      ...Fields,
      sampleVariables: SampleVariables,
      category: Type.Optional(
        Type.Union([CategoryName, Type.Null()], {
          description: `${DEFAULT_CATEGORY} Absent keeps the current version's; null removes it.`,
        }),
      ),
    },
    strict,
  ),
  { ...FIELDS_EXAMPLE, subject: 'Your password reset link, {{ name }}' },
);
const PreviewBody = withExample(
  Type.Object(
    {
      variables: Type.Optional(
        Type.Record(Type.String(), Type.Unknown(), {
          description: "Without them, the template's sample variables (or none).",
        }),
      ),
    },
    strict,
  ),
  { variables: SAMPLE_EXAMPLE },
);
const KeyParam = Type.Object({ key: { ...TemplateKey, examples: ['password-reset'] } });
const LocaleParam = Type.Object({ key: { ...TemplateKey, examples: ['password-reset'] }, locale: LocaleTag });
/** A locale variant: the template's fields for one locale (docs/localization.md). */
const VariantBody = withExample(Type.Object(Fields, strict), {
  subject: 'Réinitialisez votre mot de passe, {{ name }}',
  text: 'Bonjour {{ name }}, c’est ici : {{ link }}',
});
const VARIANT_EXAMPLE = {
  locale: 'fr',
  ...exampleOf(VariantBody),
  updatedAt: '2026-11-28T09:05:00.000Z',
};
const VariantView = Type.Object({
  locale: Type.String({ description: 'A canonical BCP 47 tag' }),
  ...ContentView.properties,
  updatedAt: Type.String({ format: 'date-time' }),
});
/** A template as the API shows it (view below). */
const TemplateView = withExample(
  Type.Object({
    key: Type.String(),
    channel: ChannelSchema,
    version: Type.Integer(),
    ...ContentView.properties,
    sampleVariables: Type.Union([Variables, Type.Null()]),
    category: Type.Union([Type.String(), Type.Null()], { description: DEFAULT_CATEGORY }),
    locales: Type.Array(VariantView, {
      description:
        "This version's locale variants, by tag: a notification renders the closest to its locale (docs/localization.md).",
    }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  }),
  {
    key: 'password-reset',
    channel: 'email',
    version: 2,
    ...FIELDS_EXAMPLE,
    sampleVariables: SAMPLE_EXAMPLE,
    category: 'security',
    locales: [VARIANT_EXAMPLE],
    createdAt: '2026-11-28T09:00:00.000Z',
    updatedAt: '2026-11-28T09:05:00.000Z',
  },
);
const TemplateList = withExample(PageSchema(TemplateView), {
  items: [exampleOf(TemplateView)],
  nextCursor: null,
});
const Preview = withExample(
  Type.Object({
    key: Type.String(),
    channel: ChannelSchema,
    version: Type.Integer(),
    content: ContentView,
  }),
  {
    key: 'password-reset',
    channel: 'email',
    version: 1,
    content: {
      subject: 'Reset your password, Ada',
      text: 'Hi Ada, reset it here: https://example.com/r?t=1',
      html: '<p>Hi Ada,</p><p><a href="https://example.com/r?t=1">Reset your password</a></p>',
    },
  },
);
const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  strict,
);

/** A template as the API shows it: its current (or pinned) version's fields and locale variants. */
function view(t: TemplateRecord, variants: readonly TemplateVariant[]) {
  return {
    key: t.key,
    channel: t.channel,
    version: t.version,
    ...t.content,
    sampleVariables: t.sampleVariables,
    category: t.category,
    locales: variants
      .filter((v) => v.key === t.key && v.version === t.version)
      .map((v) => ({ locale: v.locale, ...v.content, updatedAt: iso(v.updatedAt) })),
    createdAt: iso(t.createdAt),
    updatedAt: iso(t.updatedAt),
  };
}

/** The path's locale tag in canonical form; a tag that is not BCP 47 is a 400. */
function localeOf(tag: string): string {
  const locale = canonicalLocale(tag);
  if (locale === undefined) {
    throw new HeraldError('VALIDATION_FAILED', `"${tag}" is not a locale tag.`, {
      errors: [{ path: 'params/locale', message: LOCALE_MESSAGE }],
    });
  }
  return locale;
}

/** The template's fields, once they fit the channel and parse (in the render threads, at NORMAL: saves never take the threads kept for CRITICAL and HIGH). */
async function check(syntax: SyntaxCheck, tenant: string, channel: Channel, body: Record<string, unknown>) {
  const content = contentOf(body);
  // Sample variables follow the acceptance rule for variables (depth, U+0000).
  let errors = [...payloadErrors(body, 'body'), ...templateErrors(channel, content)];
  if (errors.length === 0) {
    [errors = []] = await syntax(tenant, [
      { sources: liquidSources(content), prefix: 'body', rank: priorityRank('NORMAL') },
    ]);
  }
  if (errors.length > 0) throw new HeraldError('VALIDATION_FAILED', 'The template is invalid.', { errors });
  return content;
}

const cursor = textCursor('t', TEMPLATE_KEY);
const notFound = (key: string) => new HeraldError('NOT_FOUND', `No template "${key}".`);

/** Template CRUD and preview (scopes templates:read / templates:write), within the caller's tenant. */
export const templateRoutes: RouteModule<CoreDeps & { renderer: Renderer; syntax: SyntaxCheck }> = (
  app,
  deps,
) => {
  const { store, clock, renderer, syntax } = deps;
  const read = { config: { scope: 'templates:read' } };
  const write = { config: { scope: 'templates:write' } };
  const tags = ['templates'];

  const created = {
    summary: 'Create a template (version 1)',
    description:
      "Scope templates:write. A Liquid template of the caller's tenant: `subject`, `text` and `html` for email, `text` for SMS, `title` and `body` for push, `title`, `body` and `url` for inapp. Output in `html` is HTML-escaped unless written `{{ value | raw }}`. A syntax error is 400 with its line and column, and so are `include`, `render` and `layout`; an existing key is 409.",
    body: CreateBody,
    response: { 201: TemplateView },
  };
  app.post('/templates', { ...write, schema: { tags, ...created } }, async (request, reply) => {
    const { key, channel } = request.body;
    const content = await check(syntax, request.principal.tenant, channel as Channel, request.body);
    const created = await store.templates.create(
      request.principal.tenant,
      key,
      channel as Channel,
      content,
      clock.now(),
      request.body.sampleVariables ?? null,
      request.body.category ?? null,
    );
    if (!created) throw new HeraldError('CONFLICT', `A template "${key}" exists; PUT a new version instead.`);
    return reply.code(201).header('location', `/templates/${key}`).send(view(created, []));
  });

  const list = {
    summary: 'List templates by key',
    description:
      "Scope templates:read. The current version of each of the tenant's templates, by key; follow `nextCursor` until it is null.",
    querystring: ListQuery,
    response: { 200: TemplateList },
  };
  app.get('/templates', { ...read, schema: { tags, ...list } }, async (request) => {
    const limit = request.query.limit ?? 50;
    const after = cursor.decode(request.query.cursor) ?? '';
    const items = await store.templates.list(request.principal.tenant, limit + 1, after);
    const { page, nextCursor } = pageOf(items, limit, cursor, (t) => t.key);
    const variants = await store.templates.variants(request.principal.tenant, page);
    return { items: page.map((t) => view(t, variants)), nextCursor };
  });

  const one = {
    summary: "A template's current version",
    description: 'Scope templates:read. 404 for a key the tenant has no template of.',
    params: KeyParam,
    response: { 200: TemplateView },
  };
  app.get('/templates/:key', { ...read, schema: { tags, ...one } }, async (request) => {
    const found = await store.templates.get(request.principal.tenant, request.params.key);
    if (!found) throw notFound(request.params.key);
    return view(found, await store.templates.variants(request.principal.tenant, [found]));
  });

  app.put(
    '/templates/:key',
    {
      ...write,
      schema: {
        tags,
        summary: 'Save a new version; notifications accepted earlier keep theirs',
        description:
          "Scope templates:write. The fields given replace the current version's as version n+1, checked as at creation; notifications accepted before keep rendering the version they pinned.",
        params: KeyParam,
        body: UpdateBody,
        response: { 200: TemplateView },
      },
    },
    async (request) => {
      const { tenant } = request.principal;
      const { key } = request.params;
      const current = await store.templates.get(tenant, key);
      if (!current) throw notFound(key);
      const channel = (request.body.channel as Channel | undefined) ?? current.channel;
      const variants = await store.templates.variants(tenant, [current]);
      // The version carries its locale variants, whose fields are the channel's.
      if (channel !== current.channel && variants.length > 0) {
        const locales = variants.map((v) => v.locale).join(', ');
        throw new HeraldError('VALIDATION_FAILED', 'The template is invalid.', {
          errors: [
            {
              path: 'body/channel',
              message: `must stay ${current.channel} while the template has locale variants (${locales}): delete them first`,
            },
          ],
        });
      }
      const content = await check(syntax, tenant, channel, request.body);
      // A new version; notifications accepted earlier keep the version they pinned.
      const samples = request.body.sampleVariables ?? current.sampleVariables;
      const category = request.body.category === undefined ? current.category : request.body.category;
      const updated = await store.templates.update(
        tenant,
        key,
        channel,
        content,
        clock.now(),
        samples,
        category,
      );
      if (!updated) throw notFound(key);
      return view(updated, await store.templates.variants(tenant, [updated]));
    },
  );

  app.put(
    '/templates/:key/locales/:locale',
    {
      ...write,
      schema: {
        tags,
        summary: 'Add or replace a locale variant (a new version)',
        description:
          "Scope templates:write. The template's fields for one BCP 47 locale (stored canonical: `fr-ca` is `fr-CA`), checked as the template's are. Saved as a new version of the template with its other variants, so notifications accepted earlier keep rendering the variants they pinned. Answers the template. 404 for a key the tenant has no template of.",
        params: LocaleParam,
        body: VariantBody,
        response: { 200: TemplateView },
      },
    },
    async (request) => {
      const { tenant } = request.principal;
      const { key } = request.params;
      const locale = localeOf(request.params.locale);
      const current = await store.templates.get(tenant, key);
      if (!current) throw notFound(key);
      const content = await check(syntax, tenant, current.channel, request.body);
      const updated = await store.templates.putVariant(tenant, key, locale, content, clock.now());
      if (!updated) throw notFound(key);
      return view(updated, await store.templates.variants(tenant, [updated]));
    },
  );

  const removeLocale = {
    summary: 'Delete a locale variant (a new version)',
    description:
      'Scope templates:write. Saves a new version of the template without the variant; notifications accepted earlier keep rendering it. 404 for a template or a variant that does not exist.',
    params: LocaleParam,
    response: { 204: Type.Null() },
  };
  app.delete(
    '/templates/:key/locales/:locale',
    { ...write, schema: { tags, ...removeLocale } },
    async (request, reply) => {
      const { key } = request.params;
      const locale = localeOf(request.params.locale);
      const removed = await store.templates.removeVariant(request.principal.tenant, key, locale, clock.now());
      if (removed === 'no-template') throw notFound(key);
      if (removed === 'no-variant')
        throw new HeraldError('NOT_FOUND', `Template "${key}" has no "${locale}" locale variant.`);
      return reply.code(204).send(null);
    },
  );

  const remove = {
    summary: 'Delete a template',
    description:
      'Scope templates:write. The key no longer names a template: a notification that names it afterwards is refused (422 TEMPLATE_NOT_FOUND), and a key the tenant has no template of is 404.',
    params: KeyParam,
    response: { 204: Type.Null() },
  };
  app.delete('/templates/:key', { ...write, schema: { tags, ...remove } }, async (request, reply) => {
    const deleted = await store.templates.delete(request.principal.tenant, request.params.key);
    if (!deleted) throw notFound(request.params.key);
    return reply.code(204).send(null);
  });

  app.post(
    '/templates/:key/preview',
    {
      ...read,
      schema: {
        tags,
        summary: 'Render a template with sample variables (422 RENDER_LIMIT past the limits)',
        description:
          'Scope templates:read. Renders the current version as the worker would, and sends nothing. A variable the template uses but `variables` lacks is 400 naming it; past the render limits (100 ms, 256 KiB of output) 422 RENDER_LIMIT; 503 with Retry-After when its render thread could not get a CPU (a busy machine).',
        params: KeyParam,
        body: PreviewBody,
        response: { 200: Preview },
      },
    },
    async (request) => {
      // The acceptance rule for variables (depth, U+0000): a preview renders what a send could.
      const errors = payloadErrors({ variables: request.body.variables ?? {} }, 'body');
      if (errors.length > 0)
        throw new HeraldError('VALIDATION_FAILED', 'The variables are invalid.', { errors });
      const found = await store.templates.get(request.principal.tenant, request.params.key);
      if (!found) throw notFound(request.params.key);
      const variables = request.body.variables ?? found.sampleVariables ?? {};
      try {
        const content = await renderer.preview(found, variables);
        return { key: found.key, channel: found.channel, version: found.version, content };
      } catch (error) {
        if (!(error instanceof RenderError)) throw error;
        if (error.limit)
          throw new HeraldError('RENDER_LIMIT', `The template is over a render limit: ${error.message}`);
        // A missing variable here is what would fail the notification at delivery.
        throw new HeraldError('VALIDATION_FAILED', `The template does not render: ${error.message}`, {
          errors: [{ path: 'body/variables', message: `must let the template render: ${error.message}` }],
        });
      }
    },
  );
};
