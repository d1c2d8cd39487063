import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/**
 * The Content-Security-Policy of everything the gateway serves (README, "Web UI"): no inline script, no framing.
 *
 * - Scripts come only from the gateway's own origin: no 'unsafe-inline', no 'unsafe-eval', no
 *   nonces. The Vite build emits only external module scripts, so nothing inline is needed.
 * - `style-src` allows inline styles. The sandbox inbox shows email HTML in an
 *   `<iframe sandbox srcdoc>`; a srcdoc document inherits its parent's policy, and email HTML is
 *   styled inline almost without exception. Inline CSS cannot run code, the frame has no
 *   `allow-scripts`, and no user content reaches the app's own DOM as HTML (React escapes it).
 * - `img-src` has no remote hosts: remote images (tracking pixels) in a sandboxed email stay
 *   unloaded, so looking at the inbox never tells a sender that a message was opened.
 * - `frame-ancestors 'none'` forbids framing the UI (clickjacking); `frame-src 'self'` lets the
 *   app hold its own srcdoc frames and nothing else.
 */
const CSP_DIRECTIVES: Record<string, string[]> = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'"],
  'connect-src': ["'self'"],
  'frame-src': ["'self'"],
  'worker-src': ["'self'"],
  'manifest-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
};

/**
 * Security headers at the edge, on every answer (UI files, proxied API answers, errors):
 * CSP, nosniff, `Referrer-Policy: no-referrer` (a URL never leaks to another site), no framing.
 */
export async function registerSecurityHeaders(app: FastifyInstance): Promise<void> {
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
    referrerPolicy: { policy: 'no-referrer' },
    xFrameOptions: { action: 'deny' },
    // The UI talks only to its own origin; nothing needs to be embedded cross-origin.
    crossOriginResourcePolicy: { policy: 'same-origin' },
    crossOriginOpenerPolicy: { policy: 'same-origin' },
  });
}
