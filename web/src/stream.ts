import { useEffect, useRef, useState } from 'react';
import { usableSession } from './api.ts';
import { STREAM_RETRY_MS, type StatusChange, TOKEN_ENDED_COMMENT } from './contract.ts';

/**
 * Follows GET /api/notifications/stream (docs/callbacks.md). EventSource cannot send the bearer
 * token, so this reads the stream with fetch and parses the SSE frames itself; after a drop it
 * reconnects with Last-Event-ID, so no change is missed or repeated. `onLive(false)` tells the
 * caller to fall back to polling until the stream is back.
 */
export function followStatus(options: {
  notificationIds?: readonly string[];
  onChange: (change: StatusChange) => void;
  onLive: (live: boolean) => void;
}): () => void {
  const abort = new AbortController();
  let lastEventId: string | undefined;
  /** The last stream ended because its access token had expired (its final comment said so). */
  let tokenEnded = false;
  const query = new URLSearchParams();
  for (const id of options.notificationIds ?? []) query.append('notificationId', id);

  async function connect(): Promise<void> {
    tokenEnded = false;
    const session = await usableSession();
    if (!session) throw new Error('no session');
    const headers: Record<string, string> = { authorization: `Bearer ${session.accessToken}` };
    if (lastEventId) headers['last-event-id'] = lastEventId;
    const response = await fetch(`/api/notifications/stream?${query}`, {
      headers,
      cache: 'no-store',
      signal: abort.signal,
    });
    // A 400 to a resume: the id is not one this Herald sent (its database was restored or wiped
    // since). Start afresh; the page reads the current status while the stream is down.
    if (response.status === 400) lastEventId = undefined;
    if (!response.ok || !response.body) throw new Error(`stream answered ${response.status}`);
    options.onLive(true);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        dispatch(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
      }
    }
  }

  function dispatch(frame: string): void {
    if (frame.startsWith(TOKEN_ENDED_COMMENT)) tokenEnded = true;
    let event = 'message';
    let id: string | undefined;
    const data: string[] = [];
    for (const line of frame.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (event !== 'status' || data.length === 0) return;
    if (id) lastEventId = id;
    options.onChange(JSON.parse(data.join('\n')) as StatusChange);
  }

  void (async () => {
    let quickBefore = false;
    while (!abort.signal.aborted) {
      try {
        await connect();
      } catch {
        // Fall through: polling covers the gap, and the reconnect resumes after lastEventId.
      }
      if (abort.signal.aborted) return;
      // A stream ended for its token's expiry (every access token's lifetime): reconnect at once
      // with the session's current token, staying live; but not twice in a row, in case the
      // session has no newer token to give.
      const quick: boolean = tokenEnded && !quickBefore;
      quickBefore = quick;
      if (quick) continue;
      options.onLive(false);
      await new Promise((resolve) => setTimeout(resolve, STREAM_RETRY_MS));
    }
  })();
  return () => abort.abort();
}

/**
 * React binding of followStatus: calls `onChange` for each change while mounted (the latest
 * callback, without reconnecting when it changes) and says whether the stream is live.
 */
export function useStatusStream(
  onChange: (change: StatusChange) => void,
  notificationIds?: readonly string[],
  enabled = true,
): boolean {
  const [live, setLive] = useState(false);
  const latest = useRef(onChange);
  latest.current = onChange;
  const key = notificationIds?.join(',') ?? '';
  useEffect(() => {
    if (!enabled) return;
    const ids = key ? key.split(',') : undefined;
    const stop = followStatus({ notificationIds: ids, onChange: (c) => latest.current(c), onLive: setLive });
    return () => {
      stop();
      setLive(false);
    };
  }, [key, enabled]);
  return live;
}
