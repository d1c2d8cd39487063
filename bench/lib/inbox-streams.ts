import { Agent, get as httpGet, request } from 'node:http';

/** What every inbox stream's new message starts with (docs/inbox-api.md: `event: message`). */
const MESSAGE = Buffer.from('event: message');

/** One open GET /inbox/stream, read as bytes: when its first `message` event arrived. */
export interface InboxStream {
  firstMessageAt: number | undefined;
  close(): void;
}

/**
 * Opens GET /inbox/stream with `token` and watches it for the first `message` event, without
 * decoding the stream (10,000 readers share the 2 cores with Herald, so they stay cheap). The
 * chunk's arrival time is the event's read time. Resolves once the stream has answered 200.
 */
function openStream(url: string, token: string): Promise<InboxStream> {
  const controller = new AbortController();
  return new Promise((resolve, reject) => {
    const req = httpGet(
      `${url}/inbox/stream`,
      // A socket of its own (agent: false): each stream holds its connection open.
      { headers: { authorization: `Bearer ${token}` }, signal: controller.signal, agent: false },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(new Error(`GET /inbox/stream: ${response.statusCode}`));
          return;
        }
        const stream: InboxStream = { firstMessageAt: undefined, close: () => controller.abort() };
        // The last bytes of the previous chunk, so that a marker cut in two is still found.
        let tail = Buffer.alloc(0);
        const onData = (chunk: Buffer) => {
          const at = Date.now();
          const seen = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
          if (seen.includes(MESSAGE)) {
            stream.firstMessageAt = at;
            response.off('data', onData);
            response.resume();
            return;
          }
          tail = Buffer.from(seen.subarray(Math.max(0, seen.length - MESSAGE.length + 1)));
        };
        response.on('data', onData);
        response.on('error', () => undefined);
        resolve(stream);
      },
    );
    req.on('error', (error) => {
      if (!controller.signal.aborted) reject(error);
    });
  });
}

/** Opens one stream per token, `parallel` at a time; rejects if any fails to open. */
export async function openStreams(
  url: string,
  tokens: readonly string[],
  parallel = 200,
  onProgress?: (opened: number) => void,
): Promise<InboxStream[]> {
  const streams: InboxStream[] = [];
  let next = 0;
  const opener = async () => {
    while (next < tokens.length) {
      const token = tokens[next++] as string;
      streams.push(await openStream(url, token));
      if (streams.length % 1000 === 0) onProgress?.(streams.length);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(parallel, tokens.length) }, opener));
  } catch (error) {
    for (const stream of streams) stream.close();
    throw error;
  }
  return streams;
}

/**
 * Sequential GET `path` with `token` over one kept-alive connection: each request's latency in
 * ms, as one client sees it with nothing queued before it (a p99 of the server's own time plus
 * one local round trip).
 */
export async function sequentialLatencies(
  url: string,
  path: string,
  token: string,
  count: number,
): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const once = () =>
    new Promise<number>((resolve, reject) => {
      const started = performance.now();
      const req = request(
        `${url}${path}`,
        { agent, headers: { authorization: `Bearer ${token}` } },
        (response) => {
          response.resume();
          response.on('end', () => {
            if (response.statusCode === 200) resolve(performance.now() - started);
            else reject(new Error(`GET ${path}: ${response.statusCode}`));
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
  try {
    const latencies: number[] = [];
    for (let i = 0; i < count; i++) latencies.push(await once());
    return latencies;
  } finally {
    agent.destroy();
  }
}

/**
 * One kept-alive connection opened now and kept open (a request every 2 s, under the server's
 * 5 s keep-alive): a process serves at most 10,000 connections (src/http/server-options.ts),
 * so with 10,000 streams open a new connection would be refused. JSON requests over it.
 */
export async function heldConnection(url: string, headers: Record<string, string>) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const send = (method: string, path: string, body?: unknown) =>
    new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        `${url}${path}`,
        {
          method,
          agent,
          headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            text += chunk;
          });
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }),
          );
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  await send('GET', '/health');
  const ping = setInterval(() => void send('GET', '/health').catch(() => undefined), 2000);
  return {
    send,
    close() {
      clearInterval(ping);
      agent.destroy();
    },
  };
}
