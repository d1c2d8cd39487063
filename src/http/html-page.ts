import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';

/**
 * The one stylesheet of Herald's public pages (one-click unsubscribe, preferences), inline and
 * allowed by its hash: no other inline style, and no script at all, can run on them.
 */
const STYLE =
  'body{font:16px system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem}' +
  'button{font:inherit;padding:.5rem 1rem}table{border-collapse:collapse;margin:1rem 0}' +
  'th,td{padding:.4rem .6rem;border-bottom:1px solid #ddd;text-align:left}td{text-align:center}' +
  'small{display:block;color:#555;font-weight:normal}.notice{background:#e7f6ec;padding:.5rem 1rem}';

/**
 * A public page's policy: nothing loads (no script, image or font), only its own stylesheet
 * applies, forms post only to its own origin, and no site may frame it. Stricter than the
 * gateway's (src/gateway/security.ts), whose header this one replaces on the way through.
 */
export const PUBLIC_PAGE_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/** Text for HTML: every tenant-supplied or recipient text goes through here. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The OpenAPI answer of a public page, with an example of its body. */
export const htmlPage = (example: string) => ({
  description: 'A small HTML page',
  content: { 'text/html': { schema: { type: 'string' }, example } },
});

/**
 * Sends a public page (the token in its URL is the credential). Its headers: the policy above,
 * no referrer (the link is a capability), no caching. `title` and `body` are HTML already.
 */
export function sendPublicPage(reply: FastifyReply, title: string, body: string) {
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', PUBLIC_PAGE_CSP)
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
        `<title>${title}</title><style>${STYLE}</style></head><body>${body}</body></html>`,
    );
}
