// The callback poster's request deadline (docs/callbacks.md: no answer within 10 s is a failed attempt),
// shared by the requests that start close together, against a real HTTPS peer that never ends
// its answer.
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createServer as createTlsServer } from 'node:tls';
import { createPoster, type PostAnswer } from '../../src/callbacks/post.ts';
import { createDeadlines } from '../../src/callbacks/send.ts';
import { peerTls } from '../helpers/peers/webpush.ts';
import { warningsDuring } from '../helpers/warnings.ts';

/** A callback message to `url`, as the sender hands it to the poster. */
const messageTo = (url: string, messageId = 'msg_1', callbackId = 'cb_1') => ({
  url,
  messageId,
  timestamp: Math.floor(Date.now() / 1000),
  secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
  body: '{}',
  callbackId,
});

/** Every answer is the receiver's 204. */
const allAnswered = (answers: readonly PostAnswer[]) => {
  for (const answer of answers) assert.deepEqual(answer, { statusCode: 204, error: null });
};

describe('callback request deadlines', () => {
  it('hands one signal to the requests that start within the window, and a new one after it', async () => {
    const deadline = createDeadlines(1_000, 40);
    const first = deadline();
    assert.equal(deadline(), first);
    await sleep(60);
    const later = deadline();
    assert.notEqual(later, first);
    assert.equal(first.signal.aborted, false);
  });

  it('aborts the requests watching when it fires, and not one that stopped watching', async () => {
    const deadline = createDeadlines(20, 10)();
    const aborted: string[] = [];
    deadline.watch(() => aborted.push('a'));
    const unwatch = deadline.watch(() => aborted.push('b'));
    deadline.watch((reason) => aborted.push(reason.name));
    unwatch();
    const alive = setTimeout(() => undefined, 1_000);
    await new Promise((resolve) => deadline.signal.addEventListener('abort', resolve, { once: true }));
    clearTimeout(alive);
    assert.deepEqual(aborted, ['a', 'TimeoutError']);
  });

  it('fires no sooner than the timeout after the last request that took it', async () => {
    // A window far wider than the sleep, which a loaded machine overshoots (66 ms for a 30 ms
    // sleep at a load of 15 on two cores); a signal of the first request's own 200 ms would
    // still fire too soon for the second.
    const deadline = createDeadlines(200, 1_000);
    const { signal } = deadline();
    await sleep(30);
    assert.equal(deadline().signal, signal);
    const lastStart = performance.now();
    // AbortSignal.timeout's timer does not keep the process alive; this one does meanwhile.
    const alive = setTimeout(() => undefined, 1_000);
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    clearTimeout(alive);
    // Timers may fire up to a millisecond early against performance.now().
    assert.ok(performance.now() - lastStart >= 199, 'the later request got its full 200 ms');
    assert.equal((signal.reason as Error).name, 'TimeoutError');
  });
});

describe('callback poster against a receiver that never finishes its answer', () => {
  // Answers 200 at once, then sends its body a byte at a time and never ends it: undici's body
  // timeout (between chunks) never fires, so only the shared deadline ends the request.
  const dribbling = new Set<ServerResponse>();
  const receiver = createHttpsServer(peerTls(), (request, response) => {
    request.resume();
    response.writeHead(200, { 'content-type': 'text/plain' });
    dribbling.add(response);
  });
  const drip = setInterval(() => {
    for (const response of dribbling) response.write('.');
  }, 20);
  let host = '';
  before(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    host = `localhost:${(receiver.address() as AddressInfo).port}`;
  });
  after(async () => {
    clearInterval(drip);
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });

  // Without the deadline the requests would wait for the body forever: fail instead of hanging.
  const limit = { timeout: 10_000 };
  it(
    'holds a slot no longer than the deadline, for every request sharing it, with no listener warning',
    limit,
    async () => {
      const poster = createPoster([host], 300);
      try {
        const warnings = await warningsDuring(async () => {
          const started = performance.now();
          const answers = await Promise.all(
            Array.from({ length: 20 }, (_, i) => poster.post(messageTo(`https://${host}/hook`, `msg_${i}`))),
          );
          assert.ok(performance.now() - started >= 299, 'no request was cut before its 300 ms');
          // The first request on each connection had its status in time: it counts as answered.
          // The ones pipelined behind it never got theirs (the body before it never ends).
          const answered = answers.filter((a) => a.statusCode === 200);
          assert.ok(answered.length > 0);
          for (const answer of answers) {
            if (answer.statusCode !== 200)
              assert.deepEqual(answer, { statusCode: null, error: 'no answer within 0.3 s' });
          }
        });
        assert.deepEqual(
          warnings.filter((w) => w.name === 'MaxListenersExceededWarning'),
          [],
        );
      } finally {
        await poster.close();
      }
    },
  );
});

describe('callback poster and the outbound rules (no request to a private address unless configured: docs/security.md)', () => {
  // A receiver on loopback that counts what reaches it.
  let reached = 0;
  const receiver = createHttpsServer(peerTls(), (request, response) => {
    reached += 1;
    request.resume();
    response.writeHead(204).end();
  });
  let port = 0;
  before(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
  });
  after(() => new Promise((resolve) => receiver.close(resolve)));

  it("says the same of a closed port, a peer that does not speak TLS and a name that does not resolve, never the error's code", async () => {
    const plain = createServer((_request, response) => response.end('plain http'));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const plainPort = (plain.address() as AddressInfo).port;
    const poster = createPoster([`127.0.0.1:${closed}`, `127.0.0.1:${plainPort}`, 'nowhere.invalid']);
    try {
      for (const url of [
        `https://127.0.0.1:${closed}/hook`,
        `https://127.0.0.1:${plainPort}/hook`,
        'https://nowhere.invalid/hook',
      ]) {
        assert.deepEqual(
          await poster.post(messageTo(url)),
          {
            statusCode: null,
            error: 'could not reach the callback URL',
          },
          url,
        );
      }
    } finally {
      await poster.close();
      await new Promise((resolve) => plain.close(resolve));
    }
  });

  it('never calls a URL the rules refuse, every time it is asked, and calls a listed host', async () => {
    // The callback was stored while its host was listed; the process now runs without the list.
    const strict = createPoster([]);
    const listed = createPoster([`localhost:${port}`]);
    try {
      for (const url of [`https://localhost:${port}/hook`, `https://127.0.0.1:${port}/hook`]) {
        for (let i = 0; i < 2; i++) {
          const answer = await strict.post(messageTo(url));
          assert.equal(answer.refused, true, url);
          assert.equal(answer.statusCode, null);
          assert.match(String(answer.error), /^callback URL must NOT name a loopback/);
        }
      }
      assert.equal((await strict.post(messageTo(`http://localhost:${port}/hook`))).refused, true);
      assert.equal(reached, 0, 'nothing reached the receiver');
      assert.deepEqual(await listed.post(messageTo(`https://localhost:${port}/hook`)), {
        statusCode: 204,
        error: null,
      });
      assert.equal(reached, 1);
    } finally {
      await Promise.all([strict.close(), listed.close()]);
    }
  });
});

describe("callback poster: each callback's own connections", () => {
  // One receiver for every callback: /hold is answered only when the test says so, /hook at
  // once. It notes which connection (client port) each request came on, and each webhook-id.
  const held: ServerResponse[] = [];
  const ports: number[] = [];
  const seen: string[] = [];
  let cut = false;
  const receiver = createHttpsServer(peerTls(), (request, response) => {
    ports.push(request.socket.remotePort as number);
    const id = String(request.headers['webhook-id']);
    seen.push(id);
    request.resume();
    // A warm-up (warm below) is answered at once on any path.
    if (id.startsWith('warm_')) response.writeHead(204).end();
    else if (request.url === '/hold') held.push(response);
    // /cut closes the connection of its first request, with the others pipelined behind it.
    else if (request.url === '/cut' && !cut) {
      cut = true;
      request.socket.destroy();
    } else response.writeHead(204).end();
  });
  let host = '';
  before(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    host = `localhost:${(receiver.address() as AddressInfo).port}`;
  });
  after(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });
  const message = (callbackId: string, path: string, i: number) =>
    messageTo(`https://${host}${path}`, `msg_${callbackId}_${i}`, callbackId);

  /**
   * Seventeen answers one after another at the callback's URL. The posters here open at most
   * eight connections (their concurrency), so at least eight of the answers came on connections
   * the receiver kept: the callback's requests are pipelined from then on.
   */
  const warm = async (poster: ReturnType<typeof createPoster>, callbackId: string, path: string) => {
    for (let i = 0; i < 17; i++) {
      const answer = await poster.post({
        ...message(callbackId, path, i),
        messageId: `warm_${callbackId}_${i}`,
      });
      assert.deepEqual(answer, { statusCode: 204, error: null });
    }
  };

  it('sends one request a connection until the receiver has kept its connections', async () => {
    const poster = createPoster([host], 5_000, 8);
    try {
      ports.length = 0;
      const flood = Array.from({ length: 8 }, (_, i) => poster.post(message('cb_new', '/hold', i)));
      while (held.length < 8) await sleep(5);
      assert.equal(new Set(ports).size, 8, 'eight connections, one request each');
      for (const response of held.splice(0)) response.writeHead(204).end();
      allAnswered(await Promise.all(flood));
    } finally {
      await poster.close();
    }
  });

  it("pipelines a callback's requests on its connections, and never queues one callback behind another's", async () => {
    // Concurrency 8: one connection of 8 pipelined requests per callback, once the receiver
    // has kept its connections for 8 answers.
    const poster = createPoster([host], 5_000, 8);
    try {
      await warm(poster, 'cb_flood', '/hold');
      ports.length = 0;
      const flood = Array.from({ length: 16 }, (_, i) => poster.post(message('cb_flood', '/hold', i)));
      while (held.length < 8) await sleep(5);
      // Eight requests of the flood reached the receiver on one connection; eight more wait.
      assert.equal(new Set(ports).size, 1, 'the flood is pipelined on one connection');
      // The other callback, to the same receiver, is answered while the flood's are held.
      const other = await Promise.all(
        Array.from({ length: 8 }, (_, i) => poster.post(message('cb_other', '/hook', i))),
      );
      allAnswered(other);
      assert.equal(held.length, 8, "the flood's other eight still wait for its connection");
      // On connections of its own (one request each: its receiver has yet to keep them).
      const [floodPort] = ports;
      assert.equal(ports.length, 16);
      assert.ok(ports.slice(8).every((port) => port !== floodPort));
      while (held.length < 16) {
        for (const response of held.filter((r) => !r.headersSent)) response.writeHead(204).end();
        await sleep(5);
      }
      for (const response of held.filter((r) => !r.headersSent)) response.writeHead(204).end();
      allAnswered(await Promise.all(flood));
    } finally {
      await poster.close();
    }
  });

  it('sends again what a closed connection left unanswered, with the same webhook-id', async () => {
    const poster = createPoster([host], 5_000, 8);
    try {
      await warm(poster, 'cb_cut', '/cut');
      ports.length = 0;
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => poster.post(message('cb_cut', '/cut', i))),
      );
      // The first was cut with its connection (a failed attempt, retried by the sender later);
      // the seven pipelined behind it went again on a new connection and were answered.
      assert.deepEqual(answers[0], { statusCode: null, error: 'could not reach the callback URL' });
      allAnswered(answers.slice(1));
      assert.ok(new Set(ports).size >= 2);
      for (let i = 1; i < 8; i++) assert.ok(seen.includes(`msg_cb_cut_${i}`));
    } finally {
      await poster.close();
    }
  });

  it("closes a callback's connections when it is forgotten", async () => {
    const poster = createPoster([host], 5_000, 8);
    try {
      assert.deepEqual(await poster.post(message('cb_gone', '/hook', 0)), { statusCode: 204, error: null });
      const connections = () =>
        new Promise<number>((resolve, reject) =>
          receiver.getConnections((error, count) => (error ? reject(error) : resolve(count))),
        );
      const before = await connections();
      poster.forget('cb_gone');
      while ((await connections()) >= before) await sleep(5);
      assert.equal(await connections(), before - 1);
    } finally {
      await poster.close();
    }
  });
});

describe('callback poster against receivers that close their connections', () => {
  // 'close': each answer says Connection: close. 'http/1.0': each answer is HTTP/1.0's, which
  // closes its connection without a word (a raw TLS peer: Node answers 1.1 to a 1.1 request);
  // it notes every request sent to it, even the ones pipelined behind the one it answers.
  // 'now and then': every 20th answer of a connection says Connection: close (a web server's
  // requests-per-connection limit).
  type Closing = 'close' | 'http/1.0' | 'now and then';
  const start = (closing: Closing) => {
    const received: string[] = [];
    if (closing === 'http/1.0') {
      const server = createTlsServer(peerTls(), (socket) => {
        let text = '';
        let answered = false;
        socket.setEncoding('latin1');
        socket.on('error', () => undefined);
        socket.on('data', (chunk: string) => {
          text += chunk;
          for (;;) {
            const end = text.indexOf('\r\n\r\n');
            if (end < 0) return;
            const head = text.slice(0, end);
            const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
            if (text.length < end + 4 + length) return;
            received.push(/webhook-id: *(\S+)/i.exec(head)?.[1] ?? '');
            text = text.slice(end + 4 + length);
            if (!answered) socket.end('HTTP/1.0 204 No Content\r\n\r\n');
            answered = true;
          }
        });
      });
      return { server, received };
    }
    const answered = new Map<unknown, number>();
    const server = createHttpsServer(peerTls(), (request, response) => {
      received.push(String(request.headers['webhook-id']));
      request.resume();
      const n = (answered.get(request.socket) ?? 0) + 1;
      answered.set(request.socket, n);
      const closes = closing === 'close' || n % 20 === 0;
      response.writeHead(204, closes ? { connection: 'close' } : {}).end();
    });
    return { server, received };
  };
  const run = async (closing: Closing) => {
    const { server, received } = start(closing);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const host = `localhost:${(server.address() as AddressInfo).port}`;
    const poster = createPoster([host], 5_000, 32);
    try {
      // 200 messages, 32 in flight, as the sender keeps them.
      let next = 0;
      const sendNext = async () => {
        while (next < 200) {
          const i = next++;
          const answer = await poster.post(messageTo(`https://${host}/hook`, `msg_${i}`));
          assert.deepEqual(answer, { statusCode: 204, error: null });
        }
      };
      await Promise.all(Array.from({ length: 32 }, sendNext));
      return received;
    } finally {
      await poster.close();
      if ('closeAllConnections' in server) (server as { closeAllConnections(): void }).closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  };

  it('never pipelines to a receiver that closes every connection, so nothing is sent twice', async () => {
    const received = await run('close');
    assert.equal(received.length, 200);
    assert.equal(new Set(received).size, 200);
  });

  it('never pipelines to an HTTP/1.0 receiver, which closes every connection without saying so', async () => {
    const received = await run('http/1.0');
    assert.equal(received.length, 200);
    assert.equal(new Set(received).size, 200);
  });

  it('keeps pipelining to a receiver that closes a connection now and then, sending few twice', async () => {
    const received = await run('now and then');
    assert.equal(new Set(received).size, 200);
    // Up to 7 requests pipelined behind each closing answer go again: about 200 / 20 of them.
    assert.ok(received.length < 300, `${received.length} requests for 200 messages`);
  });
});
