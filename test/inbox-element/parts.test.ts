import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type SseEvent, SseParser } from '../../web/inbox/sse.ts';
import { backoff } from '../../web/inbox/stream.ts';
import { relativeTime } from '../../web/inbox/time.ts';
import { REFRESH_AT, Tokens, tokenLifetime } from '../../web/inbox/token.ts';
import { eventually } from '../helpers/eventually.ts';

/** A JWT-shaped token with these claims (unsigned: the element reads, never verifies). */
function token(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'EdDSA', typ: 'at+jwt' })}.${part(claims)}.c2ln`;
}

describe("<herald-inbox>'s parts that need no browser", () => {
  it('parses SSE frames cut anywhere, with CRLF, comments, ids carried over and retry', () => {
    const stream =
      ': hello\r\nevent: message\r\nid: 7\r\ndata: {"a":\r\ndata: 1}\r\n\r\nevent: counts\ndata: {"unread":2}\n\n' +
      'retry: 5000\n:' +
      ' the access token has expired\n\nid\ndata:x\n\n';
    for (const size of [1, 2, 3, 7, stream.length]) {
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const parser = new SseParser(
        (event) => events.push(event),
        (comment) => comments.push(comment),
      );
      for (let i = 0; i < stream.length; i += size) parser.feed(stream.slice(i, i + size));
      assert.deepEqual(
        events,
        [
          { event: 'message', data: '{"a":\n1}', id: '7' },
          // No id of its own: the last one carries over, as the HTML standard says.
          { event: 'counts', data: '{"unread":2}', id: '7' },
          // `id` with no value resets it.
          { event: 'message', data: 'x', id: '' },
        ],
        `chunks of ${size}`,
      );
      assert.deepEqual(comments, [': hello', ': the access token has expired']);
      assert.equal(parser.retryMs, 5000);
    }
  });

  it('writes relative times in the largest whole unit, in the locale asked for', () => {
    const now = Date.parse('2026-11-29T12:00:00Z');
    const en = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
    const fr = new Intl.RelativeTimeFormat('fr', { numeric: 'auto' });
    const ago = (ms: number, format = en) => relativeTime(now - ms, now, format);
    assert.equal(ago(10_000), 'now');
    assert.equal(ago(50_000), '50 seconds ago');
    assert.equal(ago(3 * 60_000), '3 minutes ago');
    assert.equal(ago(2 * 3_600_000), '2 hours ago');
    assert.equal(ago(26 * 3_600_000), 'yesterday');
    assert.equal(ago(10 * 86_400_000), 'last week');
    assert.equal(ago(400 * 86_400_000), 'last year');
    assert.equal(ago(3 * 60_000, fr), 'il y a 3 minutes');
  });

  it("reads a token's lifetime from its claims and refreshes through the provider once at a time", async () => {
    assert.equal(tokenLifetime(token({ iat: 1000, exp: 4600 })), 3_600_000);
    assert.equal(tokenLifetime('not a token'), null);
    assert.equal(tokenLifetime(token({ iat: 1000 })), null);
    const errors: unknown[] = [];
    const tokens = new Tokens((error) => errors.push(error));
    try {
      await assert.rejects(tokens.current(), /no token/);
      const first = token({ iat: 1000, exp: 4600 });
      tokens.set(first);
      assert.equal(await tokens.current(), first);
      // A provider: every waiting caller gets the same new token from one call.
      let calls = 0;
      const second = token({ iat: 2000, exp: 5600 });
      tokens.provider = async () => {
        calls += 1;
        return second;
      };
      assert.deepEqual(await Promise.all([tokens.refresh(), tokens.refresh()]), [second, second]);
      assert.equal(calls, 1);
      assert.equal(tokens.value, second);
      // Past REFRESH_AT of its life (here a token that lives 0 s): current() asks for a new one.
      assert.ok(REFRESH_AT < 1);
      tokens.set(token({ iat: 3000, exp: 3000 }));
      assert.equal(await tokens.current(), second);
      assert.equal(calls, 2);
      tokens.provider = async () => '';
      tokens.set(null);
      await assert.rejects(tokens.current(), /gave no token/);
      assert.deepEqual(errors, []);
    } finally {
      tokens.stop();
    }
  });

  it("asks the provider for a new token by itself at REFRESH_AT of the current one's life", async () => {
    const tokens = new Tokens(() => undefined);
    let calls = 0;
    const now = Date.now() / 1000;
    const later = token({ iat: now, exp: now + 3600 });
    tokens.provider = async () => {
      calls += 1;
      return later;
    };
    try {
      // A token that lives 200 ms: its timer asks for the next one after about 160 ms.
      tokens.set(token({ iat: now, exp: now + 0.2 }));
      await eventually(async () => tokens.value === later, 5000, 'the refreshed token');
      assert.equal(calls, 1);
    } finally {
      tokens.stop();
    }
  });

  it('waits longer after each failure, capped, with jitter', () => {
    assert.equal(backoff(1, 1000, 0), 500);
    assert.equal(backoff(1, 1000, 1), 1000);
    assert.equal(backoff(3, 1000, 1), 4000);
    assert.equal(backoff(20, 1000, 1), 30_000);
    assert.equal(backoff(20, 1000, 0), 15_000);
  });
});
