import type { CoreDeps } from '../deps.ts';
import { type FieldError, HeraldError } from '../errors.ts';
import { tooDeep } from '../http/field-messages.ts';
import { pageOf, textCursor } from '../http/page.ts';
import type { App, RouteModule } from '../http/types.ts';
import type { BatchDecoder } from '../notifications/batch-decoder.ts';
import { MAX_DEPTH } from '../notifications/payload.ts';
import { schemaErrors } from '../notifications/validate.ts';
import { checkedByHandler, recipientBatchRoute } from './batch-route.ts';
import { mergePatch } from './merge-patch.ts';
import { RECIPIENT_ID, type RecipientProfile } from './model.ts';
import type { PreferenceTokens } from './preferences-token.ts';
import { checkProfile, invalidRecipient, isPlainObject, NOT_AN_OBJECT, nestsDeeper } from './profile.ts';
import {
  idChecker,
  ListQuery,
  NewRecipientParams,
  ProfileBody,
  ProfilePatch,
  RecipientPage,
  RecipientParams,
  RecipientView,
} from './schemas.ts';
import { recipientViews } from './view.ts';

/** What the recipient routes are built from. */
export type RecipientRouteDeps = CoreDeps & {
  preferenceTokens: PreferenceTokens;
  batchDecoder: BatchDecoder;
};

const read = { scope: 'recipients:read' };
const write = { scope: 'recipients:write' };

const notFound = () => new HeraldError('NOT_FOUND', 'No such recipient.');

/** How many times a PATCH reads again when the profile changed between its read and its write. */
const PATCH_ATTEMPTS = 5;

const cursor = textCursor('r', RECIPIENT_ID);

/**
 * /recipients (docs/recipients.md): a tenant's recipients, their profiles replaced whole (PUT), merged
 * (PATCH, RFC 7396), read, listed in ID order, erased, and written 1000 at a time (batch-route.ts).
 * Scopes recipients:read and recipients:write; another tenant's recipient is unknown (404).
 */
export const recipientRoutes: RouteModule<RecipientRouteDeps> = async (app, deps) => {
  const { store, clock, config } = deps;
  const pushAllowedHosts = config.providers.pushAllowedHosts ?? [];
  const { view } = recipientViews(config.publicUrl, deps.preferenceTokens);
  const checked = (raw: unknown): RecipientProfile => {
    const result = checkProfile(raw, 'body', pushAllowedHosts);
    if (Array.isArray(result)) throw invalidRecipient(result);
    return result;
  };

  app.put(
    '/recipients/:recipientId',
    {
      config: write,
      ...checkedByHandler,
      schema: {
        tags: ['recipients'],
        summary: "Create or replace a recipient's profile",
        description:
          "Scope recipients:write. The whole profile: a field left out (or null) is removed; the preferences stay. Every address is checked as a notification's recipient is: `email`, `phone` in E.164, `push` (at most 10 targets, each a Web Push `subscription` or a `deviceToken` and `platform`), `locale` a BCP 47 tag, `timezone` an IANA name (both stored in their canonical spelling), `data` a JSON object of at most 8 KiB. A bad field is 400 and changes nothing. 201 when created, 200 when replaced.",
        params: NewRecipientParams,
        body: ProfileBody,
        response: { 200: RecipientView, 201: RecipientView },
      },
    },
    async (request, reply) => {
      const { recipientId } = request.params;
      if (!idChecker.Check({ recipientId })) {
        const errors: FieldError[] = [];
        schemaErrors(idChecker, { recipientId }, 'params', errors);
        throw new HeraldError('VALIDATION_FAILED', 'The recipient ID is invalid.', { errors });
      }
      const profile = checked(request.body);
      const [stored] = await store.recipients.put(
        request.principal.tenant,
        [{ id: recipientId, profile }],
        clock.now(),
      );
      if (!stored) throw new Error('a put of one recipient returned none');
      if (stored.created) reply.header('location', `/recipients/${encodeURIComponent(recipientId)}`);
      return reply.code(stored.created ? 201 : 200).send(await view(stored.record));
    },
  );

  app.get(
    '/recipients/:recipientId',
    {
      config: read,
      schema: {
        tags: ['recipients'],
        summary: 'One recipient: its profile and its preferences link',
        description:
          'Scope recipients:read. Addresses unmasked (the caller stored them); an unset field is null. `preferencesUrl` is the page where the recipient manages its own preferences, without signing in. 404 for an ID the tenant has no recipient of.',
        params: RecipientParams,
        response: { 200: RecipientView },
      },
    },
    async (request) => {
      const record = await store.recipients.get(request.principal.tenant, request.params.recipientId);
      if (!record) throw notFound();
      return view(record);
    },
  );

  app.get(
    '/recipients',
    {
      config: read,
      schema: {
        tags: ['recipients'],
        summary: "The tenant's recipients, in ID order",
        description:
          'Scope recipients:read. IDs in bytewise order (upper case before lower case); follow `nextCursor` until it is null.',
        querystring: ListQuery,
        response: { 200: RecipientPage },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 50;
      const rows = await store.recipients.list(request.principal.tenant, {
        limit: limit + 1,
        after: cursor.decode(request.query.cursor),
      });
      const { page, nextCursor } = pageOf(rows, limit, cursor, (r) => r.id);
      return { items: await Promise.all(page.map(view)), nextCursor };
    },
  );

  app.delete(
    '/recipients/:recipientId',
    {
      config: write,
      schema: {
        tags: ['recipients'],
        summary: 'Erase a recipient: its profile and its preferences',
        description:
          'Scope recipients:write. Notifications accepted before keep only their masked recipient. 404 for an ID the tenant has no recipient of.',
        params: RecipientParams,
        response: { 204: { description: 'Erased', type: 'null' } },
      },
    },
    async (request, reply) => {
      if (!(await store.recipients.remove(request.principal.tenant, request.params.recipientId))) {
        throw notFound();
      }
      return reply.code(204).send(null);
    },
  );

  // PATCH takes application/merge-patch+json too; its parser is this scope's alone.
  await app.register(async (scope: App) => {
    scope.addContentTypeParser(
      'application/merge-patch+json',
      { parseAs: 'string' },
      scope.getDefaultJsonParser('error', 'error'),
    );
    scope.patch(
      '/recipients/:recipientId',
      {
        config: write,
        ...checkedByHandler,
        schema: {
          tags: ['recipients'],
          summary: "Change part of a recipient's profile (JSON merge patch)",
          description:
            'Scope recipients:write. A JSON merge patch (RFC 7396), sent as `application/merge-patch+json` or `application/json`: a field given replaces it (a list, such as `push`, whole), `null` removes it, `data` merges key by key. The result is checked as a PUT is; a bad result is 400 and changes nothing. A patch that is not a JSON object is 400; an unknown recipient 404. The preferences stay.',
          params: RecipientParams,
          body: ProfilePatch,
          response: { 200: RecipientView },
        },
      },
      async (request) => {
        const patch: unknown = request.body;
        if (!isPlainObject(patch)) {
          throw new HeraldError('VALIDATION_FAILED', 'A merge patch is a JSON object.', {
            errors: [{ path: 'body', message: NOT_AN_OBJECT }],
          });
        }
        // A profile nests at most MAX_DEPTH levels below `data`: a deeper patch cannot make a
        // valid one, and is refused before the (recursive) merge.
        if (nestsDeeper(patch, MAX_DEPTH + 1))
          throw invalidRecipient([{ path: 'body', message: tooDeep(MAX_DEPTH + 1) }]);
        const { tenant } = request.principal;
        const { recipientId } = request.params;
        for (let attempt = 1; ; attempt++) {
          const current = await store.recipients.get(tenant, recipientId);
          if (!current) throw notFound();
          const profile = checked(mergePatch(current.profile, patch));
          // Written only over the profile this patch was merged into: a concurrent change is
          // read again and the patch merged into it, never overwritten.
          const stored = await store.recipients.replaceIf(
            tenant,
            recipientId,
            current.profile,
            profile,
            clock.now(),
          );
          if (stored) return view(stored);
          if (attempt === PATCH_ATTEMPTS) {
            throw new HeraldError('CONFLICT', 'The recipient kept changing during the patch; send it again.');
          }
        }
      },
    );
  });

  await recipientBatchRoute(app, { ...deps, pushAllowedHosts });
};
