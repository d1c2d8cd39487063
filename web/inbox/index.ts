/**
 * /inbox.js, served by Herald's gateway: defines `<herald-inbox>` (docs/inbox-element.md). One
 * self-contained file built by esbuild (web/inbox/build.mjs); a page that loads it twice, or
 * defines its own element of that name first, keeps the first definition.
 */
import { HeraldInbox } from './element.ts';

if (!customElements.get('herald-inbox')) customElements.define('herald-inbox', HeraldInbox);

declare global {
  interface HTMLElementTagNameMap {
    'herald-inbox': HeraldInbox;
  }
}
