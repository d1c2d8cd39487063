import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { escapeHtml, htmlPage, sendPublicPage as sendPage } from '../http/html-page.ts';
import type { App, RouteModule } from '../http/types.ts';
import { maskKey } from '../notifications/mask.ts';
import { unsubscribed } from '../recipients/model.ts';
import type { UnsubscribeTarget, UnsubscribeTokens } from './unsubscribe-token.ts';

/** RFC 8058: the one key and value a one-click POST carries. */
const ONE_CLICK = 'List-Unsubscribe=One-Click';

const TokenParams = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 4096, examples: ['v1.kZ3m0Q2bX9kQ4f7TzL1c0Vn8aE5rWq'] }),
});
/**
 * A one-click POST body: urlencoded (what mail clients send) or multipart with the same field,
 * read by the platform's form-data parser. A malformed body is simply not one-click.
 */
async function isOneClick(request: FastifyRequest): Promise<boolean> {
  const body = typeof request.body === 'string' ? request.body : '';
  const type = request.headers['content-type'] ?? 'application/x-www-form-urlencoded';
  try {
    const form = await new Response(body, { headers: { 'content-type': type } }).formData();
    return form.getAll('List-Unsubscribe').includes('One-Click');
  } catch {
    return false;
  }
}

/**
 * What a one-click POST does: a person's email opts that person out (recipients/model.ts
 * `unsubscribed`); any other, or a person deleted since, adds an `unsubscribe` suppression.
 */
async function unsubscribe(deps: CoreDeps, target: UnsubscribeTarget): Promise<void> {
  const now = deps.clock.now();
  const { person, ...address } = target;
  if (person) {
    const found = await deps.store.recipients.get(target.tenant, person.id);
    if (found) {
      const preferences = unsubscribed(found.preferences, target.channel, person.category);
      if (await deps.store.recipients.setPreferences(target.tenant, person.id, preferences, now)) return;
    }
  }
  await deps.store.suppressions.add([{ ...address, reason: 'unsubscribe' }], now);
}

/**
 * /unsubscribe/{token}: RFC 8058 one-click unsubscribe, public (the token is the credential).
 * GET shows a page with a button and changes nothing, so a mail scanner that follows links
 * unsubscribes no one; POST with `List-Unsubscribe=One-Click` adds an `unsubscribe`
 * suppression (LOW email only). A forged or altered token is a 404.
 */
export const unsubscribeRoutes: RouteModule<CoreDeps & { unsubscribe: UnsubscribeTokens }> = async (
  app,
  deps,
) => {
  const target = async (token: string): Promise<UnsubscribeTarget> => {
    const found = await deps.unsubscribe.open(token);
    if (!found) throw new HeraldError('NOT_FOUND', 'This unsubscribe link is not valid.');
    return found;
  };
  await app.register(async (scope: App) => {
    const asText = { parseAs: 'string' as const, bodyLimit: 4096 };
    scope.addContentTypeParser(
      ['application/x-www-form-urlencoded', 'multipart/form-data'],
      asText,
      (_request, body, done) => done(null, body),
    );
    scope.get(
      '/unsubscribe/:token',
      {
        schema: {
          tags: ['suppressions'],
          summary: 'One-click unsubscribe: the confirmation page (changes nothing)',
          description:
            'Public: the page the List-Unsubscribe link of a LOW email opens. It names the masked recipient and has a button that posts the one-click body; opening it (a mail scanner following links) changes nothing. A forged or foreign token is 404.',
          security: [],
          params: TokenParams,
          response: {
            200: htmlPage(
              '<h1>Unsubscribe</h1><p>Stop newsletters and other bulk messages to <strong>a***@example.com</strong>? Important messages about your account still arrive.</p><form method="post">…</form>',
            ),
          },
        },
      },
      async (request, reply) => {
        const { channel, recipient } = await target(request.params.token);
        return sendPage(
          reply,
          'Unsubscribe',
          `<h1>Unsubscribe</h1><p>Stop newsletters and other bulk messages to <strong>${escapeHtml(maskKey(channel, recipient))}</strong>? ` +
            'Important messages about your account still arrive.</p>' +
            `<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
        );
      },
    );
    scope.post(
      '/unsubscribe/:token',
      {
        schema: {
          tags: ['suppressions'],
          summary:
            'One-click unsubscribe (RFC 8058): adds an `unsubscribe` suppression, or opts a person out',
          description: `The body is \`${ONE_CLICK}\` (form-encoded), as mail clients send it. Again: 200, nothing new. The link of an email to a person (recipient \`{ id }\`) opts that person out of the email's category on email (of email altogether when it had none) instead of suppressing the address.`,
          security: [],
          consumes: ['application/x-www-form-urlencoded', 'multipart/form-data'],
          params: TokenParams,
          response: {
            200: htmlPage(
              '<h1>Unsubscribed</h1><p><strong>a***@example.com</strong> gets no more newsletters or other bulk messages.</p>',
            ),
          },
        },
      },
      async (request, reply) => {
        const found = await target(request.params.token);
        if (!(await isOneClick(request))) {
          throw new HeraldError('VALIDATION_FAILED', `The body must be ${ONE_CLICK}.`, {
            errors: [{ path: 'body', message: `must be ${ONE_CLICK}` }],
          });
        }
        await unsubscribe(deps, found);
        return sendPage(
          reply,
          'Unsubscribed',
          `<h1>Unsubscribed</h1><p><strong>${escapeHtml(maskKey(found.channel, found.recipient))}</strong> gets no more newsletters or other bulk messages.</p>`,
        );
      },
    );
  });
};
