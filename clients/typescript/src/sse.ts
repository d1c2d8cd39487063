/** One Server-Sent Event as read off a stream (comment lines are skipped). */
export interface ServerSentEvent {
  event: string;
  data: string;
  /** The event's `id:`, or undefined when it had none (the last id then stays the client's). */
  id: string | undefined;
}

/**
 * Reads the events of a `text/event-stream` body (the WHATWG format: `event:`, `data:` and `id:`
 * lines, a blank line ending each event; `:` comments and `retry:` are skipped), in order, until
 * the body ends.
 */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let event: { event?: string; data: string[]; id?: string } = { data: [] };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let newline = buffer.search(/\r\n|\r|\n/);
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        newline = buffer.search(/\r\n|\r|\n/);
        if (line === '') {
          if (event.data.length > 0)
            yield { event: event.event ?? 'message', data: event.data.join('\n'), id: event.id };
          event = { data: [] };
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event.event = value;
        else if (field === 'data') event.data.push(value);
        else if (field === 'id') event.id = value;
      }
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}
