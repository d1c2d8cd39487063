import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { createSmtpProvider } from '../../../src/providers/email/index.ts';
import { parseSmtpUrl } from '../../../src/providers/email/smtp-options.ts';
import type { Provider } from '../../../src/providers/types.ts';
import { type SmtpPeer, startSmtpPeer } from '../../helpers/peers/smtp.ts';
import { never, outgoing, providerDeps } from './deps.ts';

const FROM = 'Herald <noreply@mail.example.com>';

describe('SMTP provider', () => {
  let peer: SmtpPeer;
  let provider: Provider;
  before(async () => {
    peer = await startSmtpPeer({
      users: { herald: 's3cret pass' },
      rejectRecipients: { 'full@example.com': 450, 'nobody@example.com': 550 },
    });
    provider = createSmtpProvider(
      { url: peer.url('herald', 's3cret pass'), from: FROM },
      providerDeps().deps,
    );
  });
  after(async () => {
    await provider.close?.();
    await peer.close();
  });

  const email = (to: string, id?: string) =>
    outgoing('email', { email: to }, { subject: 'Reset', text: 'Hello Ada', html: '<p>Hello Ada</p>' }, id);

  it('delivers with auth and records a Message-ID derived from the notification ID', async () => {
    const id = crypto.randomUUID();
    const result = await provider.send(email('ada@example.com', id), never);
    assert.equal(result.ok, true);
    assert.ok(result.ok);
    assert.equal(result.providerMessageId, `${id}@mail.example.com`);
    assert.match(result.detail ?? '', /^250/);
    const mail = peer.received.find((m) => m.headers.get('x-herald-notification-id') === id);
    assert.ok(mail, 'the peer received the message');
    assert.deepEqual(mail.to, ['ada@example.com']);
    assert.equal(mail.from, 'noreply@mail.example.com');
    assert.equal(mail.headers.get('message-id'), `<${id}@mail.example.com>`);
    assert.equal(mail.headers.get('subject'), 'Reset');
    assert.match(mail.headers.get('x-mailgun-variables') ?? '', new RegExp(id));
    assert.match(mail.raw, /Hello Ada/);
  });

  it('reports a recipient refused with 550 as a permanent failure', async () => {
    const result = await provider.send(email('nobody@example.com'), never);
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.equal(result.kind, 'permanent');
    assert.match(result.detail, /550|No such user/);
  });

  it('reports a recipient refused with 450 as a transient failure', async () => {
    const result = await provider.send(email('full@example.com'), never);
    assert.ok(!result.ok);
    assert.equal(result.kind, 'transient');
  });

  it('treats an unreachable server as transient, and connects again once it is back', async () => {
    const closed = await startSmtpPeer();
    const port = closed.port;
    await closed.close();
    const offline = createSmtpProvider(
      { url: closed.url(undefined, undefined, 'maxConnections=2&rateLimit=0'), from: FROM },
      providerDeps().deps,
    );
    try {
      // More refusals than the pool has connections: none may keep a slot of the pool.
      for (let i = 0; i < 3; i++) {
        const result = await offline.send(email('ada@example.com'), AbortSignal.timeout(10_000));
        assert.ok(!result.ok);
        assert.equal(result.kind, 'transient');
      }
      const back = await startSmtpPeer({ port });
      try {
        // A pool that lost its slots would never send this; the signals end the waits.
        const result = await offline.send(email('ada@example.com'), AbortSignal.timeout(10_000));
        assert.equal(result.ok, true, JSON.stringify(result));
        assert.equal(back.received.length, 1);
      } finally {
        await back.close();
      }
    } finally {
      await offline.close?.();
    }
  });

  for (const tls of ['implicit', 'starttls'] as const)
    it(`delivers over TLS (${tls === 'implicit' ? 'smtps://' : 'STARTTLS, tls=required'}) on the socket Herald opens`, async () => {
      const secured = await startSmtpPeer({ tls, users: { herald: 'pw' } });
      const query = tls === 'starttls' ? 'tls=required' : '';
      const provider = createSmtpProvider(
        { url: secured.url('herald', 'pw', query), from: FROM },
        providerDeps().deps,
      );
      try {
        const result = await provider.send(email('ada@example.com'), AbortSignal.timeout(10_000));
        assert.equal(result.ok, true, JSON.stringify(result));
        assert.deepEqual(
          secured.received.map((m) => [m.to[0], m.secure]),
          [['ada@example.com', true]],
        );
      } finally {
        await provider.close?.();
        await secured.close();
      }
    });

  it('reports bad credentials as a configuration error, not a recipient failure, without logging the password', async () => {
    const { deps, logged } = providerDeps();
    const wrong = createSmtpProvider({ url: peer.url('herald', 'wrong-password'), from: FROM }, deps);
    const result = await wrong.send(email('ada@example.com'), never);
    await wrong.close?.();
    assert.ok(!result.ok);
    assert.equal(result.kind, 'config');
    assert.match(result.detail, /authentication/i);
    assert.ok(logged.some((line) => line.level === 'error'));
    assert.doesNotMatch(JSON.stringify(logged), /wrong-password/);
    assert.doesNotMatch(result.detail, /wrong-password/);
  });

  it('sends credentials only over TLS to a host that is not loopback, unless tls=optional', async () => {
    // The machine's own name resolves to one of its addresses, but it is a name, not a loopback
    // literal: credentials to it must go over TLS, and this peer offers no STARTTLS.
    const open = await startSmtpPeer({ users: { herald: 'pw' }, listen: '0.0.0.0' });
    try {
      const { deps } = providerDeps();
      const url = `smtp://herald:pw@${hostname()}:${open.port}`;
      const strict = createSmtpProvider({ url, from: FROM }, deps);
      const refused = await strict.send(email('ada@example.com'), never);
      await strict.close?.();
      assert.ok(!refused.ok && refused.kind === 'config', JSON.stringify(refused));
      assert.equal(refused.detail, 'SMTP server did not accept STARTTLS, which SMTP_URL requires');
      assert.equal(open.authAttempts, 0, 'no credentials went out in the clear');
      const lax = createSmtpProvider({ url: `${url}?tls=optional`, from: FROM }, deps);
      const sent = await lax.send(email('ada@example.com'), never);
      await lax.close?.();
      assert.equal(sent.ok, true, JSON.stringify(sent));
      assert.equal(open.authAttempts, 1);
    } finally {
      await open.close();
    }
  });

  it('requires TLS for credentials on smtp:// except to loopback or with tls=optional', () => {
    const requires = (url: string) => parseSmtpUrl(url).requireTLS;
    assert.equal(requires('smtp://u:p@smtp.example.com'), true);
    assert.equal(requires('smtp://u:p@smtp.example.com?tls=optional'), false);
    assert.equal(requires('smtps://u:p@smtp.example.com'), false, 'TLS from the first byte');
    assert.equal(requires('smtp://smtp.example.com'), false, 'no credentials to protect');
    assert.equal(requires('smtp://smtp.example.com?tls=required'), true);
    for (const host of ['127.0.0.1', '127.0.0.53', '[::1]', 'localhost']) {
      assert.equal(requires(`smtp://u:p@${host}:2525`), false, host);
    }
    assert.throws(
      () => parseSmtpUrl('smtp://u:p@smtp.example.com?tls=maybe'),
      /tls must be optional or required/,
    );
  });

  it('keeps the pool within maxConnections under a burst', async () => {
    const burstPeer = await startSmtpPeer();
    const pooled = createSmtpProvider(
      { url: burstPeer.url(undefined, undefined, 'maxConnections=2&rateLimit=0'), from: FROM },
      providerDeps().deps,
    );
    assert.equal(pooled.limits.concurrency, 2);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => pooled.send(email(`user${i}@example.com`), never)),
    );
    await pooled.close?.();
    await burstPeer.close();
    assert.ok(results.every((r) => r.ok));
    assert.equal(burstPeer.received.length, 20);
    assert.ok(
      burstPeer.maxConcurrentConnections <= 2,
      `saw ${burstPeer.maxConcurrentConnections} connections`,
    );
  });

  it('answers an aborted send (timeout or shutdown) as transient', async () => {
    const aborted = await provider.send(email('ada@example.com'), AbortSignal.abort());
    assert.ok(!aborted.ok);
    assert.equal(aborted.kind, 'transient');
  });

  it('accepts only email recipients', () => {
    assert.equal(provider.accepts({ email: 'a@example.com' }), true);
    assert.equal(provider.accepts({ phone: '+15551234567' }), false);
  });
});
