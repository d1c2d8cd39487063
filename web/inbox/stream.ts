import { TOKEN_ENDED_COMMENT } from '../../src/notifications/stream-protocol.ts';
import { type InboxApi, tokenRefused } from './api.ts';
import { SseParser } from './sse.ts';
import type { InboxCounts, InboxItem } from './types.ts';

/** The first wait after a failure, unless the server's `retry:` says otherwise; doubled per failure. */
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;

export interface StreamHandlers {
  message(item: InboxItem): void;
  counts(counts: InboxCounts): void;
  /**
   * The stream is open; `resumed` is false when it starts afresh (the first time, or after the
   * server refused to resume): what happened while it was down must be read again.
   */
  open(resumed: boolean): void;
  down(error: unknown): void;
}

/** The wait before the `failures`-th reconnection in a row: doubling, capped, with jitter. */
export function backoff(failures: number, baseMs: number, random = Math.random()): number {
  const ceiling = Math.min(MAX_RETRY_MS, baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random);
}

/**
 * Follows GET {api-url}/inbox/stream with fetch (EventSource cannot send the Authorization
 * header), parsing the events by hand. After a drop it reconnects with Last-Event-ID, so the
 * server replays what was missed; after failures it waits longer each time (backoff). A stream
 * the server ended for its token's expiry is reopened at once with a new token.
 */
export function followInbox(api: InboxApi, on: StreamHandlers): () => void {
  const abort = new AbortController();
  let lastEventId: string | undefined;
  let retryMs = FIRST_RETRY_MS;

  /** One connection, to its end; whether it ended for its token (reconnect at once). */
  async function connect(): Promise<{ tokenEnded: boolean; opened: boolean }> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    const response = await api.send('/inbox/stream', { headers, signal: abort.signal });
    // A resume the server cannot serve (an id it never sent): start afresh, and read again.
    if (response.status === 400 && lastEventId !== undefined) {
      await response.body?.cancel();
      lastEventId = undefined;
      return { tokenEnded: false, opened: false };
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new Error(
        tokenRefused(response) ? 'the token was refused' : `the stream answered ${response.status}`,
      );
    }
    on.open(lastEventId !== undefined);
    let tokenEnded = false;
    const parser = new SseParser(
      (event) => {
        lastEventId = event.id;
        if (event.event === 'message') on.message(JSON.parse(event.data) as InboxItem);
        else if (event.event === 'counts') on.counts(JSON.parse(event.data) as InboxCounts);
      },
      (comment) => {
        if (comment.startsWith(TOKEN_ENDED_COMMENT)) tokenEnded = true;
      },
    );
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(value);
    }
    if (parser.retryMs !== undefined) retryMs = parser.retryMs;
    return { tokenEnded, opened: true };
  }

  void (async () => {
    let failures = 0;
    let quickBefore = false;
    while (!abort.signal.aborted) {
      let quick = false;
      try {
        const ended = await connect();
        // A stream that was open is not a failure; one its token ended is reopened at once,
        // but not twice in a row (the provider may have no newer token to give).
        failures = ended.opened ? 0 : failures;
        quick = (ended.tokenEnded && !quickBefore) || !ended.opened;
      } catch (error) {
        if (abort.signal.aborted) return;
        failures += 1;
        on.down(error);
      }
      quickBefore = quick;
      if (quick) continue;
      await new Promise((resolve) => setTimeout(resolve, backoff(Math.max(1, failures), retryMs)));
    }
  })();
  return () => abort.abort();
}
