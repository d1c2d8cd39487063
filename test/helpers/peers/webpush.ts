import { createDecipheriv, createECDH, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { importJWK, jwtVerify } from 'jose';
import { createStall, type Stall } from './stall.ts';

const FIXTURES = join(import.meta.dirname, '../../fixtures/push');

/** The test CA's server certificate for localhost; clients trust it through NODE_EXTRA_CA_CERTS. */
export function peerTls(): { key: Buffer; cert: Buffer } {
  return {
    key: readFileSync(join(FIXTURES, 'server.key')),
    cert: readFileSync(join(FIXTURES, 'server.pem')),
  };
}

/** A scripted answer of the peer; requests take them in order, then get 201. */
export interface ScriptedResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** A push message the peer accepted, decrypted. */
export interface ReceivedPush {
  subscriptionId: string;
  headers: IncomingMessage['headers'];
  claims: Record<string, unknown>;
  plaintext: string;
  /** When the request arrived, epoch ms. */
  at: number;
}

interface Subscriber {
  ecdh: ReturnType<typeof createECDH>;
  auth: Buffer;
  applicationServerKey: string;
  script: ScriptedResponse[];
}

/** A local RFC 8030 push service over HTTPS that checks VAPID and decrypts aes128gcm (RFC 8291). */
export interface WebPushPeer {
  origin: string;
  received: ReceivedPush[];
  /** Requests refused for their VAPID header or encryption, with the reason. */
  refused: { status: number; reason: string }[];
  /** Most requests seen in progress at once (for the scheduler's concurrency limit). */
  maxInFlight: number;
  /** Arrival times (peer wall clock) of every request. */
  arrivals: number[];
  /** Delay before answering, to make concurrency observable. */
  holdMs: number;
  /** Per-subscription slowness: the answer waits `stall.delay(subscription id)` ms. */
  stall: Stall;
  /** A subscription as a browser would give it, bound to `applicationServerKey`. */
  subscribe(applicationServerKey: string): { endpoint: string; keys: { p256dh: string; auth: string } };
  /** Answers the next requests for this endpoint with these responses. */
  script(endpoint: string, ...responses: ScriptedResponse[]): void;
  close(): Promise<void>;
}

export async function startWebPushPeer(): Promise<WebPushPeer> {
  const subscribers = new Map<string, Subscriber>();
  let inFlight = 0;
  const server = createServer(peerTls(), (request, response) => {
    inFlight++;
    peer.maxInFlight = Math.max(peer.maxInFlight, inFlight);
    const arrivedAt = Date.now();
    peer.arrivals.push(arrivedAt);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      handle(request, Buffer.concat(chunks), arrivedAt)
        .then(async (answer) => {
          if (peer.holdMs > 0) await new Promise((r) => setTimeout(r, peer.holdMs));
          await peer.stall.wait(/^\/push\/([\w-]+)$/.exec(request.url ?? '')?.[1] ?? '');
          inFlight--;
          reply(response, answer);
        })
        .catch((error: Error) => {
          inFlight--;
          reply(response, { status: 500, body: error.message });
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://localhost:${(server.address() as AddressInfo).port}`;

  async function handle(
    request: IncomingMessage,
    body: Buffer,
    arrivedAt: number,
  ): Promise<ScriptedResponse> {
    const id = /^\/push\/([\w-]+)$/.exec(request.url ?? '')?.[1];
    const subscriber = id ? subscribers.get(id) : undefined;
    if (!id || !subscriber) return { status: 404, body: 'no such subscription' };
    const refuse = (status: number, reason: string) => {
      peer.refused.push({ status, reason });
      return { status, body: reason };
    };
    const vapid = /^vapid t=([^,\s]+),\s*k=([\w-]+)$/.exec(request.headers.authorization ?? '');
    if (!vapid) return refuse(401, 'missing VAPID authorization');
    const [, token, key] = vapid as unknown as [string, string, string];
    let claims: Record<string, unknown>;
    try {
      claims = await verifyVapid(token, key, origin);
    } catch (error) {
      return refuse(401, `VAPID JWT rejected: ${(error as Error).message}`);
    }
    if (key !== subscriber.applicationServerKey)
      return refuse(403, 'VAPID key differs from the subscription');
    if (request.headers['content-encoding'] !== 'aes128gcm') return refuse(415, 'expected aes128gcm');
    if (!request.headers.ttl) return refuse(400, 'missing TTL');
    const next = subscriber.script.shift();
    if (next) return next;
    const plaintext = decryptAes128gcm(body, subscriber.ecdh, subscriber.auth).toString('utf8');
    peer.received.push({ subscriptionId: id, headers: request.headers, claims, plaintext, at: arrivedAt });
    return { status: 201, headers: { location: `${origin}/message/${randomUUID()}` } };
  }

  const peer: WebPushPeer = {
    origin,
    received: [],
    refused: [],
    maxInFlight: 0,
    arrivals: [],
    holdMs: 0,
    stall: createStall(),
    subscribe(applicationServerKey) {
      const id = randomUUID();
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const auth = randomBytes(16);
      subscribers.set(id, { ecdh, auth, applicationServerKey, script: [] });
      return {
        endpoint: `${origin}/push/${id}`,
        keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') },
      };
    },
    script(endpoint, ...responses) {
      const id = endpoint.split('/').pop() ?? '';
      const subscriber = subscribers.get(id);
      if (!subscriber) throw new TypeError(`unknown endpoint ${endpoint}`);
      subscriber.script.push(...responses);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return peer;
}

function reply(response: ServerResponse, answer: ScriptedResponse): void {
  response.writeHead(answer.status, answer.headers ?? {});
  response.end(answer.body ?? '');
}

/** RFC 8292: ES256 JWT signed by the key in `k`, `aud` = the push resource's origin, `exp` within 24 h, `sub` set. */
async function verifyVapid(token: string, k: string, origin: string): Promise<Record<string, unknown>> {
  const point = Buffer.from(k, 'base64url');
  if (point.length !== 65 || point[0] !== 4) throw new Error('k is not an uncompressed P-256 point');
  const key = await importJWK(
    {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33).toString('base64url'),
    },
    'ES256',
  );
  const { payload } = await jwtVerify(token, key, {
    algorithms: ['ES256'],
    audience: origin,
    requiredClaims: ['exp', 'sub'],
  });
  if ((payload.exp as number) > Date.now() / 1000 + 24 * 3600) throw new Error('exp more than 24 h ahead');
  if (!/^(mailto:|https:)/.test(String(payload.sub))) throw new Error('sub is not mailto: or https:');
  return payload as Record<string, unknown>;
}

/** RFC 8291 section 3.4 / RFC 8188: decrypts a single-record aes128gcm body with the user agent's keys. */
export function decryptAes128gcm(
  body: Buffer,
  ua: ReturnType<typeof createECDH>,
  authSecret: Buffer,
): Buffer {
  const salt = body.subarray(0, 16);
  const idLength = body.readUInt8(20);
  const asPublic = body.subarray(21, 21 + idLength);
  const record = body.subarray(21 + idLength);
  const hmac = (key: Buffer, data: Buffer) => createHmac('sha256', key).update(data).digest();
  const ecdhSecret = ua.computeSecret(asPublic);
  const keyInfo = Buffer.concat([
    Buffer.from('WebPush: info\0'),
    ua.getPublicKey(),
    asPublic,
    Buffer.from([1]),
  ]);
  const ikm = hmac(hmac(authSecret, ecdhSecret), keyInfo);
  const prk = hmac(salt, ikm);
  const cek = hmac(prk, Buffer.from('Content-Encoding: aes128gcm\0\x01')).subarray(0, 16);
  const nonce = hmac(prk, Buffer.from('Content-Encoding: nonce\0\x01')).subarray(0, 12);
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  // The last record ends with the delimiter 0x02, then zero padding.
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Error('missing last-record delimiter');
  return padded.subarray(0, end);
}
