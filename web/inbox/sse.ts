/** One event of a Server-Sent Events stream, as the HTML standard's parser dispatches it. */
export interface SseEvent {
  event: string;
  data: string;
  /** The stream's last event ID after this event (it carries over to events without an `id`). */
  id: string | undefined;
}

/**
 * An incremental parser of `text/event-stream` (HTML standard, "Parsing an event stream"):
 * `fetch` gives the bytes in arbitrary chunks, so a line or an event may be cut anywhere.
 * EventSource itself cannot be used: it cannot send the `Authorization` header.
 */
export class SseParser {
  /** The last event ID, kept across events as the standard says; sent back as Last-Event-ID. */
  lastEventId: string | undefined;
  /** The reconnection time the server asked for with `retry:`, in ms. */
  retryMs: number | undefined;
  private buffer = '';
  private event = '';
  private data: string[] = [];
  /** A `\r` ended the last chunk: a `\n` starting the next one belongs to the same line end. */
  private pendingCr = false;

  constructor(
    private readonly onEvent: (event: SseEvent) => void,
    private readonly onComment: (comment: string) => void = () => undefined,
  ) {}

  feed(chunk: string): void {
    let text = chunk;
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    let start = 0;
    for (;;) {
      const match = /\r\n|\r|\n/g;
      match.lastIndex = start;
      const found = match.exec(this.buffer);
      if (!found) break;
      // A lone `\r` at the buffer's end may be the first half of `\r\n`.
      if (found[0] === '\r' && found.index === this.buffer.length - 1) this.pendingCr = true;
      this.line(this.buffer.slice(start, found.index));
      start = found.index + found[0].length;
    }
    this.buffer = this.buffer.slice(start);
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) {
      this.onComment(line);
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.lastEventId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
  }

  private dispatch(): void {
    const event = this.event || 'message';
    const data = this.data;
    this.event = '';
    this.data = [];
    if (data.length === 0) return;
    this.onEvent({ event, data: data.join('\n'), id: this.lastEventId });
  }
}
