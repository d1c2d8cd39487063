/** What every Herald `status` event starts with (src/notifications/stream-hub.ts): its id follows. */
const PREFIX = Buffer.from('event: status\nid: ');
const NEWLINE = 0x0a;

/**
 * Counts Herald's SSE `status` events in a byte stream and keeps the id of the last one, without
 * decoding the stream or copying its chunks (the bench's readers share the 2 cores with Herald,
 * so they stay cheap). The id is that of the last event whose id line has arrived; a reader that
 * resumes from it with Last-Event-ID gets each event once (only the data of an event cut in the
 * middle is lost, which this count does not need).
 */
export class SseCounter {
  count = 0;
  lastId: string | undefined;
  /** The stream's last bytes, too few to hold PREFIX: searched with the next chunk's start. */
  private tail = Buffer.alloc(0);
  /** The start of an id whose line has not ended yet. */
  private idHead: string | undefined;

  feed(chunk: Buffer): void {
    let from = 0;
    if (this.idHead !== undefined) {
      const end = chunk.indexOf(NEWLINE);
      if (end === -1) {
        this.idHead += chunk.toString('latin1');
        this.keepTail(chunk);
        return;
      }
      this.lastId = this.idHead + chunk.toString('latin1', 0, end);
      this.idHead = undefined;
      from = end;
    }
    // A PREFIX across the seam starts in the tail and ends in this chunk.
    let idAt = -1;
    if (this.tail.length > 0) {
      const seam = Buffer.concat([this.tail, chunk.subarray(0, PREFIX.length - 1)]);
      const at = seam.indexOf(PREFIX);
      if (at !== -1) {
        this.count += 1;
        idAt = at + PREFIX.length - this.tail.length;
      }
    }
    for (let at = chunk.indexOf(PREFIX, from); at !== -1; at = chunk.indexOf(PREFIX, at + PREFIX.length)) {
      this.count += 1;
      idAt = at + PREFIX.length;
    }
    if (idAt !== -1) {
      const end = chunk.indexOf(NEWLINE, idAt);
      if (end === -1) this.idHead = chunk.toString('latin1', idAt);
      else this.lastId = chunk.toString('latin1', idAt, end);
    }
    this.keepTail(chunk);
  }

  /** A new connection: its bytes do not continue the last one's. */
  reset(): void {
    this.tail = Buffer.alloc(0);
    this.idHead = undefined;
  }

  private keepTail(chunk: Buffer): void {
    const keep = PREFIX.length - 1;
    // A chunk shorter than that keeps the earlier end with it.
    const end = chunk.length >= keep ? chunk : Buffer.concat([this.tail, chunk]);
    this.tail = Buffer.from(end.subarray(Math.max(0, end.length - keep)));
  }
}
