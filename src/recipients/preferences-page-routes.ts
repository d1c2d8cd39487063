import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { clientAddress, trustedProxies } from '../auth/client-address.ts';
import { createThrottle } from '../auth/throttle.ts';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { htmlPage, sendPublicPage } from '../http/html-page.ts';
import type { App, RouteModule } from '../http/types.ts';
import type { RecipientKey } from '../store/port/recipients.ts';
import type { CategoryRecord } from './model.ts';
import { preferencesFromForm, preferencesPageBody, readPreferencesForm } from './preferences-form.ts';
import type { PreferenceTokens } from './preferences-token.ts';

/** A form of every box of a few hundred categories; far more than a browser posts for a usual tenant. */
const FORM_LIMIT = 256 * 1024;
/** Categories read per page while listing a tenant's. */
const CATEGORY_PAGE = 500;

const TokenParams = Type.Object({
  token: Type.String({
    minLength: 1,
    maxLength: 4096,
    examples: ['WyJhY21lIiwidXNlci0xODQyIl0.q0s9nYtW3dqbV2mC1xL0ZpJ4cT7uRkE8aH6fG5bN2sM'],
  }),
});
const PAGE_EXAMPLE =
  '<h1>Notification preferences</h1><form method="post"><table>…<input type="checkbox" name="marketing.email" checked>…</table><button type="submit">Save</button></form>';

/**
 * /preferences/{token}: the page on which a recipient manages its own preferences (docs/preferences.md,
 * `preferencesUrl`), public like /unsubscribe/{token} (the token is the credential). GET shows
 * every category of the tenant with a box per channel and changes nothing; POST saves the boxes.
 * It runs no script and needs none. Posts, and links that do not open, are throttled per client
 * address (HERALD_PREFERENCES_MAX_POSTS); a forged or altered token, or one whose recipient was
 * deleted, is a 404.
 */
export const preferencesPageRoutes: RouteModule<CoreDeps & { preferenceTokens: PreferenceTokens }> = async (
  app,
  deps,
) => {
  const { store, clock, config } = deps;
  const isTrusted = trustedProxies(config.trustedProxies);
  const throttle = createThrottle(store.auth, clock, {
    scope: 'preferences',
    windowMs: config.preferencesWindowSeconds * 1000,
    limits: { subject: config.preferencesMaxPosts, address: config.preferencesMaxPosts },
    message: 'Too many tries from this address; try again later.',
  });
  /** Counts one post (or a link that did not open) from the client; 429 past the limit. */
  const count = async (request: FastifyRequest) => {
    const address = clientAddress(request, isTrusted);
    await throttle.attempt(address, address);
  };
  const notFound = () => new HeraldError('NOT_FOUND', 'This preferences link is not valid.');
  /** The recipient a token names; a token that does not open is counted, then 404. */
  const recipientOf = async (
    request: FastifyRequest,
    token: string,
    counted: boolean,
  ): Promise<RecipientKey> => {
    const key = await deps.preferenceTokens.open(token);
    if (key) return key;
    if (!counted) await count(request);
    throw notFound();
  };
  const categoriesOf = async (tenant: string) => {
    const all: CategoryRecord[] = [];
    for (;;) {
      const page = await store.categories.list(tenant, { limit: CATEGORY_PAGE, after: all.at(-1)?.name });
      all.push(...page);
      if (page.length < CATEGORY_PAGE) return all;
    }
  };

  await app.register(async (scope: App) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_LIMIT },
      (_request, body, done) => done(null, body),
    );
    scope.get(
      '/preferences/:token',
      {
        schema: {
          tags: ['preferences'],
          summary: "The recipient's preferences page (changes nothing)",
          description:
            'Public: the page `preferencesUrl` opens. Every category of the tenant with a checkbox per channel named `<category>.<channel>`, and `channels.<channel>` for a channel as a whole, checked when a notification would be sent; required categories checked and disabled. A forged or altered token is 404.',
          security: [],
          params: TokenParams,
          response: { 200: htmlPage(PAGE_EXAMPLE) },
        },
      },
      async (request, reply) => {
        const key = await recipientOf(request, request.params.token, false);
        const recipient = await store.recipients.get(key.tenant, key.id);
        if (!recipient) throw notFound();
        const body = preferencesPageBody(await categoriesOf(key.tenant), recipient.preferences, false);
        return sendPublicPage(reply, 'Notification preferences', body);
      },
    );
    scope.post(
      '/preferences/:token',
      {
        bodyLimit: FORM_LIMIT,
        schema: {
          tags: ['preferences'],
          summary: "Save the recipient's choices from the preferences page",
          description:
            'The form as a browser posts it (application/x-www-form-urlencoded: the checked boxes). Every box the page shows becomes a choice, true when checked and false when not; answers the page again with a notice. A field the page does not have is 400.',
          security: [],
          consumes: ['application/x-www-form-urlencoded'],
          params: TokenParams,
          response: {
            200: htmlPage(
              PAGE_EXAMPLE.replace(
                '<form',
                '<p class="notice" role="status">Your choices are saved.</p><form',
              ),
            ),
          },
        },
      },
      async (request, reply) => {
        await count(request);
        const key = await recipientOf(request, request.params.token, true);
        const raw = request.body;
        if (raw !== undefined && typeof raw !== 'string') {
          throw new HeraldError(
            'UNSUPPORTED_MEDIA_TYPE',
            'Post the form as application/x-www-form-urlencoded.',
          );
        }
        const form = readPreferencesForm(raw ?? '');
        const categories = await categoriesOf(key.tenant);
        const saved = await store.recipients.changePreferences(
          key.tenant,
          key.id,
          (current) => preferencesFromForm(current, categories, form),
          clock.now(),
        );
        if (!saved) throw notFound();
        return sendPublicPage(
          reply,
          'Notification preferences',
          preferencesPageBody(categories, saved.preferences, true),
        );
      },
    );
  });
};
