import { EventSource } from 'eventsource';
import type { StatusChange } from '../../src/notifications/changes.ts';

/** One `status` event as a client received it. */
export interface Received {
  id: string;
  change: StatusChange;
}

/** A live status stream read with the `eventsource` package, as a client application would. */
export interface StreamClient {
  received: Received[];
  /** Comment lines do not reach EventSource; `opened` says the connection answered 200. */
  opened: Promise<void>;
  close(): void;
}

/**
 * Opens `url` with a bearer token (EventSource cannot set headers itself, so its `fetch` option
 * adds them) and, when given, a Last-Event-ID to resume from.
 */
export function openStream(url: string, token: string, lastEventId?: string): StreamClient {
  const received: Received[] = [];
  const source = new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: {
          ...init.headers,
          authorization: `Bearer ${token}`,
          ...(lastEventId && !('last-event-id' in (init.headers ?? {}))
            ? { 'last-event-id': lastEventId }
            : {}),
        },
      }),
  });
  source.addEventListener('status', (event) => {
    received.push({ id: event.lastEventId, change: JSON.parse(event.data) });
  });
  const opened = new Promise<void>((resolve, reject) => {
    source.onopen = () => resolve();
    source.onerror = (error) => reject(error);
  });
  return { received, opened, close: () => source.close() };
}
