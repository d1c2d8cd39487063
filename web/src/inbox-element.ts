import { type DetailedHTMLProps, type HTMLAttributes, useEffect, useState } from 'react';
import type { HeraldInbox } from '../inbox/element.ts';

export type { HeraldInbox };

declare module 'react' {
  namespace JSX {
    interface IntrinsicElements {
      /** `<herald-inbox>` (docs/inbox-element.md): attributes only; `token` and `tokenProvider` are set on the element. */
      'herald-inbox': DetailedHTMLProps<HTMLAttributes<HTMLElement>, HTMLElement> & {
        'api-url'?: string;
        locale?: string;
        align?: 'start' | 'end';
      };
    }
  }
}

/**
 * Loads /inbox.js, as a caller's own page does (a <script src>, allowed by the gateway's
 * `script-src 'self'`), once per page; true once `<herald-inbox>` is defined. Properties must
 * wait for that: set on an element not yet upgraded, they would hide the class's own.
 */
export function useInboxElement(): boolean {
  const [ready, setReady] = useState(() => customElements.get('herald-inbox') !== undefined);
  useEffect(() => {
    if (ready) return;
    if (!document.querySelector('script[data-herald-inbox]')) {
      const script = document.createElement('script');
      script.src = '/inbox.js';
      script.dataset.heraldInbox = '';
      document.head.append(script);
    }
    let mounted = true;
    void customElements.whenDefined('herald-inbox').then(() => {
      if (mounted) setReady(true);
    });
    return () => {
      mounted = false;
    };
  }, [ready]);
  return ready;
}
