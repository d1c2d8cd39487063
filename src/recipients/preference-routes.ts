import { Type } from '@sinclair/typebox';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { withExample } from '../http/examples.ts';
import type { App, RouteModule } from '../http/types.ts';
import type { Preferences } from './model.ts';
import { PreferencesBody, PreferencesPatch, PreferencesView, RecipientId } from './preference-schemas.ts';
import { mergePreferences, normalizedPreferences } from './preferences-merge.ts';

/** RFC 7396's media type; a PATCH may also say application/json (docs/preferences.md). */
const MERGE_PATCH = 'application/merge-patch+json';

const Params = Type.Object({ recipientId: withExample(RecipientId, 'user-1842') });

const view = (p: Preferences) => ({ channels: p.channels, categories: p.categories });

const unknownRecipient = () => new HeraldError('NOT_FOUND', 'There is no such recipient.');

/**
 * /recipients/{recipientId}/preferences (docs/preferences.md): a recipient's own choices per channel and
 * per category and channel. Reading needs `recipients:read`, changing `recipients:write`;
 * another tenant's recipient is a 404 like an unknown one.
 */
export const preferenceRoutes: RouteModule<CoreDeps> = async (app, deps) => {
  const { store, clock } = deps;
  // In a scope of its own: the merge-patch parser serves these routes (and is added only if
  // the app does not have one already).
  await app.register(async (scope: App) => {
    if (!scope.hasContentTypeParser(MERGE_PATCH)) {
      scope.addContentTypeParser(
        MERGE_PATCH,
        { parseAs: 'string' },
        scope.getDefaultJsonParser('error', 'error'),
      );
    }

    scope.get(
      '/recipients/:recipientId/preferences',
      {
        config: { scope: 'recipients:read' },
        schema: {
          tags: ['preferences'],
          summary: "A recipient's preferences",
          description:
            "Each choice is a boolean; a channel or category left out means no choice was made. A notification of category K on channel C is sent unless the first of `categories[K][C]`, `channels[C]` and the category's `defaultChannels[C]` that is set is false; CRITICAL notifications and required categories always go.",
          params: Params,
          response: { 200: PreferencesView },
        },
      },
      async (request) => {
        const recipient = await store.recipients.get(request.principal.tenant, request.params.recipientId);
        if (!recipient) throw unknownRecipient();
        return view(recipient.preferences);
      },
    );

    scope.put(
      '/recipients/:recipientId/preferences',
      {
        config: { scope: 'recipients:write' },
        schema: {
          tags: ['preferences'],
          summary: "Replace a recipient's preferences",
          description: 'A part left out (`channels` or `categories`) is emptied: no choice.',
          params: Params,
          body: PreferencesBody,
          response: { 200: PreferencesView },
        },
      },
      async (request) => {
        const { tenant } = request.principal;
        const preferences = normalizedPreferences(request.body);
        const stored = await store.recipients.setPreferences(
          tenant,
          request.params.recipientId,
          preferences,
          clock.now(),
        );
        if (!stored) throw unknownRecipient();
        return view(stored.preferences);
      },
    );

    scope.patch(
      '/recipients/:recipientId/preferences',
      {
        config: { scope: 'recipients:write' },
        schema: {
          tags: ['preferences'],
          summary: "Change a recipient's preferences with a JSON merge patch (RFC 7396)",
          description: `Content-Type \`${MERGE_PATCH}\` or \`application/json\`. A member replaces the same member, null removes it (a choice, a category's choices, or all of \`channels\` or \`categories\`), a member left out stays. Applied in one transaction: concurrent patches are never lost.`,
          consumes: [MERGE_PATCH, 'application/json'],
          params: Params,
          body: PreferencesPatch,
          response: { 200: PreferencesView },
        },
      },
      async (request) => {
        const stored = await store.recipients.changePreferences(
          request.principal.tenant,
          request.params.recipientId,
          (current) => mergePreferences(current, request.body),
          clock.now(),
        );
        if (!stored) throw unknownRecipient();
        return view(stored.preferences);
      },
    );
  });
};
