import { InboxApi, InboxError } from './api.ts';
import { bellIcon, h, safeHref } from './dom.ts';
import { followInbox } from './stream.ts';
import { applyStyles } from './styles.ts';
import { relativeTime } from './time.ts';
import { Tokens } from './token.ts';
import type { InboxCounts, InboxItem, InboxPage, TokenProvider } from './types.ts';

/** Messages per page of GET /inbox (the panel shows about six at a time). */
const PAGE = 20;
/** How often the relative times are written again while the panel is open. */
const TICK_MS = 30_000;

/** The parts of one message's row that change. */
interface Row {
  node: HTMLElement;
  title: HTMLElement;
  unread: HTMLElement;
  body: HTMLElement;
  time: HTMLTimeElement;
  read: HTMLButtonElement;
  archive: HTMLButtonElement;
}

let rows = 0;

const newest = (a: InboxItem, b: InboxItem) =>
  Date.parse(b.createdAt) - Date.parse(a.createdAt) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * `<herald-inbox api-url="/api">`: a bell with the unread count and a panel with the recipient's
 * messages, live (docs/inbox-element.md). The host page sets `token` and `tokenProvider`; the element
 * keeps everything else to itself, in an open shadow root.
 */
export class HeraldInbox extends HTMLElement {
  static observedAttributes = ['api-url', 'locale'];

  private readonly tokens = new Tokens((error) => this.failed(error));
  private api: InboxApi | null = null;
  private stopStream: (() => void) | null = null;
  /** Bumped by each start and stop: answers to an older generation's requests are dropped. */
  private generation = 0;
  private items: InboxItem[] = [];
  private readonly rows = new Map<string, Row>();
  private next: string | null = null;
  private loading = false;
  private loaded = false;
  private countsNow: InboxCounts = { unread: 0, unseen: 0 };
  private format: Intl.RelativeTimeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  private tick: ReturnType<typeof setInterval> | undefined;

  private readonly bell: HTMLButtonElement;
  private readonly badge: HTMLElement;
  private readonly panel: HTMLElement;
  private readonly readAll: HTMLButtonElement;
  private readonly scroller: HTMLElement;
  private readonly list: HTMLElement;
  private readonly status: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly more: HTMLElement;
  private readonly observer: IntersectionObserver;

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    applyStyles(root);
    this.badge = h('span', { class: 'badge', part: 'badge', 'aria-hidden': 'true', hidden: true });
    this.bell = h(
      'button',
      {
        type: 'button',
        class: 'bell',
        part: 'bell',
        'aria-haspopup': 'dialog',
        'aria-expanded': 'false',
        'aria-controls': 'panel',
      },
      bellIcon(),
      this.badge,
    );
    this.readAll = h(
      'button',
      { type: 'button', class: 'link-button', part: 'read-all', disabled: true },
      'Mark all as read',
    );
    this.list = h('div', { class: 'list', role: 'feed', 'aria-labelledby': 'heading', 'aria-busy': 'false' });
    this.status = h('p', { class: 'status', role: 'status' });
    this.empty = h('p', { class: 'empty', part: 'empty', hidden: true }, 'No notifications yet.');
    this.more = h('p', { class: 'more', hidden: true }, 'Loading more…');
    this.scroller = h('div', { class: 'scroller' }, this.list, this.empty, this.more);
    this.panel = h(
      'div',
      {
        id: 'panel',
        class: 'panel',
        part: 'panel',
        role: 'dialog',
        'aria-labelledby': 'heading',
        tabindex: '-1',
        hidden: true,
      },
      h(
        'div',
        { class: 'header', part: 'header' },
        h('h2', { id: 'heading' }, 'Notifications'),
        this.readAll,
      ),
      this.status,
      this.scroller,
    );
    root.append(this.bell, this.panel);
    this.writeCounts();

    this.bell.addEventListener('click', () => this.toggle());
    this.readAll.addEventListener('click', () => void this.markAll('read'));
    root.addEventListener('keydown', (event) => this.onKey(event as KeyboardEvent));
    this.list.addEventListener('click', (event) => this.onListClick(event));
    this.observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting)) void this.loadMore();
      },
      { root: this.scroller, rootMargin: '120px' },
    );
    this.observer.observe(this.more);
    // Set on the element before this class was defined (a framework rendering first, a deferred
    // script): such values are own properties hiding the accessors; pass them through these.
    for (const name of ['tokenProvider', 'token'] as const) {
      if (!Object.hasOwn(this, name)) continue;
      const value = this[name] as never;
      delete this[name];
      this[name] = value;
    }
  }

  /** The recipient token the element sends (`Authorization: Bearer`). */
  get token(): string | null {
    return this.tokens.value;
  }
  set token(value: string | null) {
    this.tokens.set(value);
    this.start();
  }

  /** Called for a new token before the current one expires and after the API refuses one. */
  get tokenProvider(): TokenProvider | null {
    return this.tokens.provider;
  }
  set tokenProvider(value: TokenProvider | null) {
    this.tokens.provider = typeof value === 'function' ? value : null;
    this.start();
  }

  /** The recipient's counts as last read from the API. */
  get counts(): InboxCounts {
    return { ...this.countsNow };
  }

  get opened(): boolean {
    return !this.panel.hidden;
  }

  connectedCallback(): void {
    document.addEventListener('click', this.onOutside);
    this.start();
  }

  disconnectedCallback(): void {
    document.removeEventListener('click', this.onOutside);
    this.stop();
  }

  attributeChangedCallback(name: string, before: string | null, after: string | null): void {
    if (before === after) return;
    if (name === 'locale') {
      this.format = new Intl.RelativeTimeFormat(after ?? undefined, { numeric: 'auto' });
      this.writeTimes();
    } else {
      this.stop();
      this.start();
    }
  }

  open(): void {
    if (this.opened) return;
    this.panel.hidden = false;
    this.bell.setAttribute('aria-expanded', 'true');
    this.panel.focus();
    this.writeTimes();
    this.tick = setInterval(() => this.writeTimes(), TICK_MS);
    // The panel was shown: what it lists has now been seen.
    if (this.countsNow.unseen > 0) void this.markAll('seen');
    // The sentinel was hidden with the panel: observe it again to learn whether it shows now.
    this.observer.unobserve(this.more);
    this.observer.observe(this.more);
    this.emit('inbox-toggle', { open: true });
  }

  close(restoreFocus = true): void {
    if (!this.opened) return;
    this.panel.hidden = true;
    this.bell.setAttribute('aria-expanded', 'false');
    clearInterval(this.tick);
    if (restoreFocus) this.bell.focus();
    this.emit('inbox-toggle', { open: false });
  }

  toggle(): void {
    if (this.opened) this.close();
    else this.open();
  }

  /** Reads the first page again (what a fresh stream does too). */
  refresh(): Promise<void> {
    return this.loadFirst();
  }

  /** Begins once it has a document, an `api-url` and a token or a way to get one. */
  private start(): void {
    const url = this.getAttribute('api-url');
    if (!this.isConnected || !url || !this.tokens.usable || this.api) return;
    this.generation += 1;
    this.api = new InboxApi(url, this.tokens);
    this.tokens.resume();
    void this.loadFirst();
    this.stopStream = followInbox(this.api, {
      message: (item) => this.arrived(item),
      counts: (counts) => this.setCounts(counts),
      // A fresh stream replays nothing: read the first page again so nothing between is missed.
      open: (resumed) => {
        if (!resumed && this.loaded) void this.loadFirst();
      },
      down: () => undefined,
    });
  }

  private stop(): void {
    this.generation += 1;
    this.stopStream?.();
    this.stopStream = null;
    this.api = null;
    this.loading = false;
    this.tokens.stop();
    clearInterval(this.tick);
  }

  /** Runs a call for the current generation; its answer, or undefined when it failed or is stale. */
  private async call<T>(method: string, path: string, keepalive = false): Promise<T | undefined> {
    const api = this.api;
    const generation = this.generation;
    if (!api) return undefined;
    try {
      const result = await api.json<T>(method, path, keepalive);
      if (generation !== this.generation) return undefined;
      this.status.textContent = '';
      return result;
    } catch (error) {
      if (generation === this.generation) this.failed(error);
      return undefined;
    }
  }

  private async loadFirst(): Promise<void> {
    this.list.setAttribute('aria-busy', 'true');
    const page = await this.call<InboxPage>('GET', `/inbox?limit=${PAGE}`);
    this.list.setAttribute('aria-busy', 'false');
    if (!page) return;
    this.loaded = true;
    this.items = page.items;
    this.next = page.nextCursor;
    this.setCounts(page);
    this.render();
  }

  private async loadMore(): Promise<void> {
    if (this.loading || !this.next || !this.opened) return;
    this.loading = true;
    this.list.setAttribute('aria-busy', 'true');
    const page = await this.call<InboxPage>(
      'GET',
      `/inbox?limit=${PAGE}&cursor=${encodeURIComponent(this.next)}`,
    );
    this.loading = false;
    this.list.setAttribute('aria-busy', 'false');
    if (!page) return;
    const known = new Set(this.items.map((item) => item.id));
    this.items = [...this.items, ...page.items.filter((item) => !known.has(item.id))];
    this.next = page.nextCursor;
    this.setCounts(page);
    this.render();
    // Still in view (a short page): observing it again reports it, and the next page loads.
    this.observer.unobserve(this.more);
    this.observer.observe(this.more);
    // Set on the element before this class was defined (a framework rendering first, a deferred
    // script): such values are own properties hiding the accessors; pass them through these.
    for (const name of ['tokenProvider', 'token'] as const) {
      if (!Object.hasOwn(this, name)) continue;
      const value = this[name] as never;
      delete this[name];
      this[name] = value;
    }
  }

  /** A message from the stream: new (shown in its place), changed, or archived (taken out). */
  private arrived(item: InboxItem): void {
    const at = this.items.findIndex((known) => known.id === item.id);
    if (at >= 0) {
      if (item.archivedAt) this.items.splice(at, 1);
      else this.items[at] = item;
    } else if (!item.archivedAt) {
      const oldest = this.items.at(-1);
      // Older than every message listed while more pages remain: it shows when its page loads.
      if (this.next && oldest && newest(item, oldest) > 0) return;
      this.items = [...this.items, item].sort(newest);
      this.emit('inbox-message', item);
    }
    this.render();
  }

  private setCounts(counts: InboxCounts): void {
    const changed = counts.unread !== this.countsNow.unread || counts.unseen !== this.countsNow.unseen;
    this.countsNow = { unread: counts.unread, unseen: counts.unseen };
    this.writeCounts();
    if (changed) this.emit('inbox-counts', this.counts);
  }

  private async refreshCounts(): Promise<void> {
    const counts = await this.call<InboxCounts>('GET', '/inbox/counts');
    if (counts) this.setCounts(counts);
  }

  private async act(id: string, action: 'read' | 'unread' | 'archive', keepalive = false): Promise<void> {
    const item = await this.call<InboxItem>('POST', `/inbox/${encodeURIComponent(id)}/${action}`, keepalive);
    if (!item) return;
    const at = this.items.findIndex((known) => known.id === id);
    if (at >= 0) {
      if (item.archivedAt) this.items.splice(at, 1);
      else this.items[at] = item;
      this.render();
    }
    await this.refreshCounts();
  }

  /** `POST /inbox/read-all` or `seen-all`: every listed message takes the change (reading also sees). */
  private async markAll(action: 'read' | 'seen'): Promise<void> {
    const done = await this.call<{ updated: number }>('POST', `/inbox/${action}-all`);
    if (!done) return;
    const now = new Date().toISOString();
    this.items = this.items.map((item) => ({
      ...item,
      seenAt: item.seenAt ?? now,
      readAt: action === 'read' ? (item.readAt ?? now) : item.readAt,
    }));
    this.render();
    await this.refreshCounts();
  }

  private failed(error: unknown): void {
    const status = error instanceof InboxError ? error.status : 0;
    const message = error instanceof Error ? error.message : String(error);
    this.status.textContent =
      status === 401 || status === 403
        ? 'Your notifications could not be loaded: please sign in again.'
        : 'Your notifications could not be loaded.';
    this.emit('inbox-error', { status, message });
  }

  private emit(type: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }

  private writeCounts(): void {
    const { unread } = this.countsNow;
    this.badge.textContent = unread > 99 ? '99+' : String(unread);
    this.badge.hidden = unread === 0;
    this.bell.setAttribute('aria-label', unread === 0 ? 'Notifications' : `Notifications, ${unread} unread`);
    this.readAll.disabled = unread === 0;
  }

  /** Puts the rows in the order of `items`, reusing each message's row (its focus stays put). */
  private render(): void {
    const focused = this.shadowRoot?.activeElement ?? null;
    const lost = focused ? [...this.rows.values()].find((row) => row.node.contains(focused)) : undefined;
    let cursor: ChildNode | null = this.list.firstChild;
    const wanted = new Set<string>();
    const size = this.next ? '-1' : String(this.items.length);
    this.items.forEach((item, index) => {
      wanted.add(item.id);
      const row = this.rows.get(item.id) ?? this.createRow(item);
      this.writeRow(row, item);
      row.node.setAttribute('aria-posinset', String(index + 1));
      row.node.setAttribute('aria-setsize', size);
      if (row.node === cursor) cursor = cursor.nextSibling;
      else this.list.insertBefore(row.node, cursor);
    });
    for (const [id, row] of this.rows) {
      if (wanted.has(id)) continue;
      row.node.remove();
      this.rows.delete(id);
    }
    // The focused row was archived: focus the row now in its place, or the panel.
    if (lost && !lost.node.isConnected) {
      const index = Math.min(Number(lost.node.getAttribute('aria-posinset')) - 1, this.items.length - 1);
      const item = this.items[index];
      (item ? this.rows.get(item.id)?.node : this.panel)?.focus();
    }
    this.empty.hidden = !this.loaded || this.items.length > 0;
    this.more.hidden = !this.next;
  }

  private createRow(item: InboxItem): Row {
    rows += 1;
    const href = safeHref(item.url);
    const title = href
      ? h('a', { class: 'title', id: `t${rows}`, href }, item.title)
      : h('span', { class: 'title', id: `t${rows}` }, item.title);
    const unread = h('span', { class: 'sr-only' }, 'Unread: ');
    title.prepend(unread);
    const body = h('p', { class: 'body', id: `b${rows}` }, item.body);
    const time = h('time', {});
    const read = h('button', { type: 'button', class: 'action', 'data-action': 'read' });
    const archive = h('button', { type: 'button', class: 'action', 'data-action': 'archive' }, '✕');
    const node = h(
      'article',
      {
        class: 'item',
        part: 'item',
        tabindex: '0',
        'data-id': item.id,
        'aria-labelledby': `t${rows}`,
        'aria-describedby': `b${rows}`,
      },
      h('span', { class: 'dot', 'aria-hidden': 'true' }),
      h('div', { class: 'main' }, title, body, time),
      h('div', { class: 'actions' }, read, archive),
    );
    const row = { node, title, unread, body, time, read, archive };
    this.rows.set(item.id, row);
    return row;
  }

  private writeRow(row: Row, item: InboxItem): void {
    const unread = item.readAt === null;
    row.node.classList.toggle('unread', unread);
    row.node.setAttribute('part', unread ? 'item unread' : 'item');
    row.unread.hidden = !unread;
    row.read.textContent = unread ? '✓' : '↺';
    const label = unread ? `Mark as read: ${item.title}` : `Mark as unread: ${item.title}`;
    row.read.setAttribute('aria-label', label);
    row.read.title = unread ? 'Mark as read' : 'Mark as unread';
    row.read.dataset.action = unread ? 'read' : 'unread';
    row.archive.setAttribute('aria-label', `Archive: ${item.title}`);
    row.archive.title = 'Archive';
    row.time.dateTime = item.createdAt;
    this.writeTime(row.time);
  }

  private writeTime(time: HTMLTimeElement): void {
    const at = Date.parse(time.dateTime);
    if (Number.isNaN(at)) return;
    time.textContent = relativeTime(at, Date.now(), this.format);
    time.title = new Date(at).toLocaleString(this.getAttribute('locale') ?? undefined);
  }

  private writeTimes(): void {
    for (const row of this.rows.values()) this.writeTime(row.time);
  }

  private onListClick(event: Event): void {
    const target = event.target as Element;
    const node = target.closest('article');
    const id = node?.getAttribute('data-id');
    if (!id) return;
    const button = target.closest('button');
    const action = button?.getAttribute('data-action');
    if (action === 'read' || action === 'unread' || action === 'archive') {
      void this.act(id, action);
      return;
    }
    // Following a message's link reads it; keepalive lets the call finish as the page changes.
    if (target.closest('a') && this.items.find((item) => item.id === id)?.readAt === null) {
      void this.act(id, 'read', true);
    }
  }

  private onKey(event: KeyboardEvent): void {
    if (event.key === 'Escape' && this.opened) {
      event.stopPropagation();
      this.close();
      return;
    }
    // The feed pattern: Page Down / Page Up (and the arrows) move between messages.
    const node = (event.target as Element).closest?.('article');
    if (!node || node !== event.target) return;
    const step =
      event.key === 'PageDown' || event.key === 'ArrowDown'
        ? 1
        : event.key === 'PageUp' || event.key === 'ArrowUp'
          ? -1
          : 0;
    const articles = [...this.list.children] as HTMLElement[];
    const index = articles.indexOf(node);
    const to =
      event.key === 'Home'
        ? articles[0]
        : event.key === 'End'
          ? articles.at(-1)
          : step
            ? articles[index + step]
            : undefined;
    if (!to) return;
    event.preventDefault();
    to.focus();
  }

  /** A click outside the element closes the panel (focus stays where the click put it). */
  private readonly onOutside = (event: MouseEvent): void => {
    if (this.opened && !event.composedPath().includes(this)) this.close(false);
  };
}
