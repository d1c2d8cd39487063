import { get } from 'node:http';
import { EventSource } from 'eventsource';
import type { RunChange, StatusChange } from '../../src/notifications/changes.ts';

/** One `status` event as a client received it. */
export interface Received {
  id: string;
  change: StatusChange;
}

/** One `workflow.run` event (a run's status change, decision 0035) as a client received it. */
export interface ReceivedRun {
  id: string;
  change: RunChange;
}

/** A live status stream read with the `eventsource` package, as a client application would. */
export interface StreamClient {
  received: Received[];
  /** The `workflow.run` events, apart: a client listening for `status` alone never sees them. */
  runs: ReceivedRun[];
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
  const runs: ReceivedRun[] = [];
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
  source.addEventListener('workflow.run', (event) => {
    runs.push({ id: event.lastEventId, change: JSON.parse(event.data) });
  });
  const opened = new Promise<void>((resolve, reject) => {
    source.onopen = () => resolve();
    source.onerror = (error) => reject(error);
  });
  return { received, runs, opened, close: () => source.close() };
}

/** A stream read over plain HTTP, which starts reading only `pauseMs` after the answer. */
export interface RawStream {
  /** The `status` events read so far, as the `eventsource` client gives them. */
  events(): Received[];
  /** Whether the server ended the stream (the client did not close it). */
  closedByServer(): boolean;
  close(): void;
}

/**
 * Opens `url` (with a Last-Event-ID, when given) and leaves its answer unread for `pauseMs` (a
 * slow client), then reads it, parsing `status` events by hand (the `eventsource` package cannot
 * pause, nor tell that the server ended a stream: it reconnects).
 */
export function rawStream(
  url: string,
  token: string,
  lastEventId: string | undefined,
  pauseMs: number,
): Promise<RawStream> {
  return new Promise((resolve, reject) => {
    const controller = new AbortController();
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    get(url, { headers, signal: controller.signal }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`stream answered ${response.statusCode}`));
        return;
      }
      const events: Received[] = [];
      let rest = '';
      let serverEnded = false;
      response.setEncoding('utf8');
      response.pause();
      setTimeout(() => response.resume(), pauseMs);
      response.on('data', (chunk: string) => {
        const blocks = (rest + chunk).split('\n\n');
        rest = blocks.pop() ?? '';
        for (const block of blocks) {
          if (!block.startsWith('event: status\n')) continue;
          const line = (name: string) =>
            block
              .split('\n')
              .find((l) => l.startsWith(`${name}: `))
              ?.slice(name.length + 2) ?? '';
          events.push({ id: line('id'), change: JSON.parse(line('data')) });
        }
      });
      response.on('error', () => undefined);
      response.on('close', () => {
        if (!controller.signal.aborted) serverEnded = true;
      });
      resolve({
        events: () => events,
        closedByServer: () => serverEnded,
        close: () => controller.abort(),
      });
    }).on('error', reject);
  });
}
