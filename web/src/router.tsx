import { type MouseEvent, type ReactNode, useSyncExternalStore } from 'react';

/** A tiny History API router: paths without a hash, so tokens never travel in a URL fragment either. */
const CHANGE = 'herald:navigate';

function subscribe(callback: () => void): () => void {
  window.addEventListener('popstate', callback);
  window.addEventListener(CHANGE, callback);
  return () => {
    window.removeEventListener('popstate', callback);
    window.removeEventListener(CHANGE, callback);
  };
}

/** The current path and query string. */
export function useLocation(): { path: string; search: URLSearchParams } {
  const href = useSyncExternalStore(subscribe, () => window.location.pathname + window.location.search);
  const url = new URL(href, window.location.origin);
  return { path: url.pathname, search: url.searchParams };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  window.dispatchEvent(new Event(CHANGE));
}

/** An in-app link: a real <a href> (open in new tab works) that navigates without reloading. */
export function Link(props: { to: string; children: ReactNode; className?: string }) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(props.to);
  };
  return (
    <a href={props.to} onClick={onClick} className={props.className}>
      {props.children}
    </a>
  );
}

/** Matches `/notifications/:id`-style patterns; returns the params or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const clean = (p: string) => p.replace(/\/+$/, '') || '/';
  const want = clean(pattern).split('/');
  const have = clean(path).split('/');
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    const h = have[i] as string;
    if (w.startsWith(':')) params[w.slice(1)] = decodeURIComponent(h);
    else if (w !== h) return null;
  }
  return params;
}
