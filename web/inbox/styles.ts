/**
 * The element's styles, themable through the custom properties listed in docs/inbox-element.md (they
 * inherit into the shadow root from wherever the host page sets them) and through `::part()`.
 * Applied as a constructed stylesheet (adoptedStyleSheets), which a page's CSP `style-src`
 * does not govern; browsers without it get a <style> element instead.
 */
export const CSS = `
:host {
  --_color: var(--herald-inbox-color, #1f2328);
  --_background: var(--herald-inbox-background, #ffffff);
  --_muted: var(--herald-inbox-muted, #59636e);
  --_border: var(--herald-inbox-border, #d1d9e0);
  --_accent: var(--herald-inbox-accent, #3454d1);
  --_unread: var(--herald-inbox-unread-background, #f0f4ff);
  --_hover: var(--herald-inbox-hover-background, #f6f8fa);
  position: relative;
  display: inline-block;
  font: var(--herald-inbox-font, inherit);
  color: var(--_color);
}
:host([hidden]) { display: none; }
* { box-sizing: border-box; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.sr-only[hidden] { display: none; }
button { font: inherit; color: inherit; cursor: pointer; }
:focus-visible { outline: 2px solid var(--_accent); outline-offset: 2px; }
.bell {
  position: relative;
  display: inline-flex;
  align-items: center;
  justify-content: center;
  width: calc(var(--herald-inbox-bell-size, 24px) + 16px);
  height: calc(var(--herald-inbox-bell-size, 24px) + 16px);
  padding: 0;
  border: 0;
  border-radius: 50%;
  background: transparent;
  color: var(--herald-inbox-bell-color, currentColor);
}
.bell:hover { background: var(--_hover); }
.bell svg { width: var(--herald-inbox-bell-size, 24px); height: var(--herald-inbox-bell-size, 24px); fill: currentColor; }
.badge {
  position: absolute;
  top: 2px;
  right: 2px;
  min-width: 18px;
  height: 18px;
  padding: 0 5px;
  border-radius: 9px;
  background: var(--herald-inbox-badge-background, #d1242f);
  color: var(--herald-inbox-badge-color, #ffffff);
  font-size: 11px;
  font-weight: 600;
  line-height: 18px;
  text-align: center;
}
.badge[hidden] { display: none; }
.panel {
  position: absolute;
  top: calc(100% + 6px);
  right: 0;
  z-index: var(--herald-inbox-z-index, 1000);
  display: flex;
  flex-direction: column;
  width: var(--herald-inbox-width, 360px);
  max-width: 100vw;
  max-height: var(--herald-inbox-max-height, 480px);
  border: 1px solid var(--_border);
  border-radius: var(--herald-inbox-radius, 8px);
  background: var(--_background);
  box-shadow: var(--herald-inbox-shadow, 0 8px 24px rgba(31, 35, 40, 0.16));
  overflow: hidden;
}
:host([align='start']) .panel { right: auto; left: 0; }
.panel[hidden] { display: none; }
.panel:focus { outline: none; }
.header {
  display: flex;
  align-items: center;
  justify-content: space-between;
  gap: 8px;
  padding: 10px 12px;
  border-bottom: 1px solid var(--_border);
}
.header h2 { margin: 0; font-size: 1em; font-weight: 600; }
.link-button {
  padding: 2px 4px;
  border: 0;
  background: transparent;
  color: var(--_accent);
  font-size: 0.875em;
}
.link-button:disabled { color: var(--_muted); cursor: default; }
.scroller { overflow-y: auto; overscroll-behavior: contain; }
.list { margin: 0; padding: 0; }
.item {
  display: flex;
  gap: 8px;
  padding: 10px 12px;
  border-bottom: 1px solid var(--_border);
}
.item:hover { background: var(--_hover); }
.item.unread { background: var(--_unread); }
.dot { flex: none; width: 8px; height: 8px; margin-top: 6px; border-radius: 50%; }
.unread .dot { background: var(--_accent); }
.main { flex: 1; min-width: 0; }
.title { display: block; font-weight: 600; color: inherit; text-decoration: none; overflow-wrap: anywhere; }
a.title:hover { text-decoration: underline; }
.body { margin: 2px 0 0; color: var(--_color); overflow-wrap: anywhere; white-space: pre-line; }
time { display: block; margin-top: 4px; color: var(--_muted); font-size: 0.8em; }
.actions { display: flex; flex-direction: column; gap: 2px; }
.action {
  width: 28px;
  height: 28px;
  padding: 0;
  border: 0;
  border-radius: 4px;
  background: transparent;
  color: var(--_muted);
  font-size: 14px;
  line-height: 28px;
}
.action:hover { background: var(--_border); color: var(--_color); }
.status, .empty, .more { margin: 0; padding: 12px; color: var(--_muted); font-size: 0.875em; text-align: center; }
.status:empty, .more[hidden], .empty[hidden] { display: none; }
`;

let shared: CSSStyleSheet | null | undefined;

/** Styles the shadow root: one constructed sheet shared by every element, or a <style> without it. */
export function applyStyles(root: ShadowRoot): void {
  if (shared === undefined) {
    try {
      shared = new CSSStyleSheet();
      shared.replaceSync(CSS);
    } catch {
      shared = null;
    }
  }
  if (shared && 'adoptedStyleSheets' in root) {
    root.adoptedStyleSheets = [shared];
    return;
  }
  const style = document.createElement('style');
  style.textContent = CSS;
  root.append(style);
}
