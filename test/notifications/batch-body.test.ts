import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createBatchDecoder } from '../../src/notifications/batch-decoder.ts';
import { liquidDigest, sourceText } from '../../src/templates/fields.ts';
import { authHeader } from '../helpers/auth.ts';
import { heldBatchApi } from '../helpers/held-batch.ts';
import { countRows, email, notificationsApp, sms } from './fixtures.ts';

/** A batch of `n` emails, each with ~7.8 KB of text of its own (about 8 MB per 1,000). */
const bigBatch = (n: number) => ({
  notifications: Array.from({ length: n }, (_, i) =>
    email({ content: { subject: 'Hello', text: `#${i} ${'x'.repeat(7800)}` } }),
  ),
});

// Issue 46, item 1: a batch body is read and checked in a batch thread, never on the event loop.
describe('POST /notifications/batch: the body is read off the event loop', () => {
  it('answers GET /health while a batch is held in its thread, and the event loop never parses the body', async () => {
    const held = await heldBatchApi('"notifications"');
    const { deps, app } = held;
    const sender = await authHeader(deps, { role: 'sender' });
    try {
      let answered = false;
      const batch = app
        .inject({ method: 'POST', url: '/notifications/batch', headers: sender, payload: bigBatch(200) })
        .finally(() => {
          answered = true;
        });
      while (held.arrived() === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      const health = await app.inject({ method: 'GET', url: '/health' });
      assert.equal(health.statusCode, 200);
      assert.equal(answered, false, 'the batch is still held in its thread');
      held.release();
      const response = await batch;
      assert.equal(response.statusCode, 207);
      assert.equal(response.json().results.length, 200);
      assert.equal(countRows(deps), 200);
      assert.equal(held.bodyParses(), 0, 'the event loop parsed the batch body');
    } finally {
      await held.close();
    }
  });
});

describe('POST /notifications/batch: bodies as Fastify reads them', () => {
  let t: Awaited<ReturnType<typeof notificationsApp>>;
  before(async () => {
    t = await notificationsApp();
  });
  after(() => t.close());

  const raw = (payload: string, contentType = 'application/json') =>
    t.app.inject({
      method: 'POST',
      url: '/notifications/batch',
      headers: { ...t.sender, 'content-type': contentType },
      payload,
    });
  const one = JSON.stringify(sms());

  it('hands the Liquid sources on as shared bytes and digests, not as text for the event loop', async () => {
    const decoder = createBatchDecoder({ threads: 1 });
    try {
      const content = { subject: 'Hi {{ name }}', text: `Dear {{ name }}, é ${'x'.repeat(7800)}` };
      const body = {
        notifications: [email({ content }), email({ content: { subject: 'Hello', text: 'no markup' } })],
      };
      const decoded = await decoder.decode(
        'acme',
        Buffer.from(JSON.stringify(body)),
        Date.now(),
        [],
        new Uint8Array(32),
      );
      assert.ok(decoded.ok && decoded.verdicts);
      const [first, second] = decoded.verdicts.map((v) => ('item' in v ? v.item : undefined));
      assert.equal(second?.liquid, null, 'content without markup has nothing to check');
      const sources = first?.liquid ?? [];
      assert.deepEqual(
        sources.map((s) => s.field),
        ['subject', 'text'],
      );
      for (const s of sources) {
        assert.ok(s.source instanceof Uint8Array, `${s.field} crossed as text`);
        assert.ok(s.source.buffer instanceof SharedArrayBuffer, `${s.field} was copied, not shared`);
        const text = content[s.field as keyof typeof content];
        assert.equal(sourceText(s.source), text);
        assert.equal(s.digest, liquidDigest(s.field, text), 'the digest of the bytes is that of the text');
      }
    } finally {
      await decoder.close();
    }
  });

  it('answers bodies that are not a batch as the JSON parser and the schema did, storing nothing', async () => {
    const rows = countRows(t.deps);
    const malformed = 'The body is not valid JSON, or holds a __proto__ or constructor.prototype key.';
    const cases: Array<[string, number, string, string?]> = [
      ['', 400, 'MALFORMED_BODY', 'The JSON body is empty.'],
      ['{', 400, 'MALFORMED_BODY', malformed],
      [`{"notifications":[${one}],"__proto__":{"x":1}}`, 400, 'MALFORMED_BODY', malformed],
      ['{"notifications":[{"constructor":{"prototype":{"x":1}}}]}', 400, 'MALFORMED_BODY', malformed],
      ['null', 400, 'VALIDATION_FAILED', 'body: must be object'],
      ['[]', 400, 'VALIDATION_FAILED', 'body: must be object'],
      ['{}', 400, 'VALIDATION_FAILED', "body/notifications: must have required property 'notifications'"],
      ['{"notifications":[]}', 400, 'VALIDATION_FAILED', 'body/notifications: must have at least 1 item'],
      [`{"notifications":${one}}`, 400, 'VALIDATION_FAILED', 'body/notifications: must be array'],
      [
        `{"dryRun":true,"notifications":[${one}]}`,
        400,
        'VALIDATION_FAILED',
        "body/dryRun: must NOT have additional property 'dryRun'",
      ],
      [
        JSON.stringify({ notifications: new Array(1001).fill(0) }),
        400,
        'VALIDATION_FAILED',
        'body/notifications: must NOT have more than 1000 items',
      ],
    ];
    for (const [body, status, code, detail] of cases) {
      const response = await raw(body);
      assert.equal(response.statusCode, status, body.slice(0, 60));
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      const problem = response.json();
      assert.equal(problem.code, code, body.slice(0, 60));
      const said = problem.errors
        ? `${problem.errors[0].path}: ${problem.errors[0].message}`
        : problem.detail;
      assert.equal(said, detail, body.slice(0, 60));
    }
    assert.equal((await raw(`{"notifications":[${one}]}`, 'text/plain')).statusCode, 415);
    assert.equal(countRows(t.deps), rows);
  });

  it('takes what the parser took: a BOM, a charset, a scalar list as one item, a constructor key', async () => {
    const bom = await raw(`\ufeff{"notifications":[${one}]}`);
    assert.equal(bom.statusCode, 207);
    assert.equal(bom.json().results[0].status, 'QUEUED');
    assert.equal(
      (await raw(`{"notifications":[${one}]}`, 'application/json; charset=utf-8')).statusCode,
      207,
    );
    const scalar = await raw('{"notifications":"x"}');
    assert.equal(scalar.statusCode, 207);
    assert.equal(scalar.json().results[0].error.errors[0].path, 'body/notifications/0');
    const ctor = await raw('{"notifications":[{"constructor":{"x":1}}]}');
    assert.equal(ctor.json().results[0].error.errors[0].path, 'body/notifications/0/channel');
  });

  it('stores each item as sent: text beyond ASCII, absent fields, items beside refused ones', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/notifications/batch',
      headers: t.sender,
      payload: {
        notifications: [
          sms({ metadata: { note: 'Zoë 😀 ünïcode', n: [1, { deep: 'ß' }] } }),
          sms({ recipient: { phone: 'nope' } }),
          sms(),
          sms({ metadata: { note: '日本語' } }),
        ],
      },
    });
    assert.equal(response.statusCode, 207);
    const results = response.json().results;
    assert.equal(results[1].error.code, 'VALIDATION_FAILED');
    const metadataOf = async (id: string) =>
      (await t.app.inject({ method: 'GET', url: `/notifications/${id}`, headers: t.sender })).json().metadata;
    assert.deepEqual(await metadataOf(results[0].notificationId), {
      note: 'Zoë 😀 ünïcode',
      n: [1, { deep: 'ß' }],
    });
    assert.deepEqual(await metadataOf(results[2].notificationId), {});
    assert.deepEqual(await metadataOf(results[3].notificationId), { note: '日本語' });
  });
});
