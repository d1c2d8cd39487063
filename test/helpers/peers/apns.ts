import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import {
  constants,
  createSecureServer,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type CryptoKey, decodeProtectedHeader, exportPKCS8, generateKeyPair, jwtVerify } from 'jose';
import { tempDir } from '../config.ts';
import { peerTls } from './webpush.ts';

/** An APNs signing key as Apple hands it out: a .p8 file and its key id. */
export interface ApnsKey {
  keyFile: string;
  keyId: string;
  publicKey: CryptoKey;
}

/** Makes a fresh P-256 key and writes its private half as a .p8 (PKCS#8 PEM) file. */
export async function createApnsKey(keyId = 'ABC123DEFG'): Promise<ApnsKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const keyFile = join(tempDir('herald-apns-'), `AuthKey_${keyId}.p8`);
  writeFileSync(keyFile, await exportPKCS8(privateKey));
  return { keyFile, keyId, publicKey };
}

/** A scripted APNs answer for one device token. */
export interface ApnsScripted {
  status: number;
  reason?: string;
  headers?: Record<string, string>;
}

/** A notification the peer accepted. */
export interface ApnsReceived {
  deviceToken: string;
  headers: IncomingHttpHeaders;
  payload: Record<string, unknown>;
  providerToken: string;
}

/** A local APNs over node:http2 with TLS that checks the ES256 provider token and the headers. */
export interface ApnsPeer {
  host: string;
  received: ApnsReceived[];
  /** Every provider token presented, in order, accepted or not. */
  providerTokens: string[];
  refused: { status: number; reason: string }[];
  maxInFlight: number;
  holdMs: number;
  script(deviceToken: string, ...answers: ApnsScripted[]): void;
  close(): Promise<void>;
}

export async function startApnsPeer(options: {
  key: ApnsKey;
  teamId: string;
  topic: string;
  /** The peer's notion of now, to judge a token's age (Apple refuses tokens older than an hour). */
  now?: () => number;
}): Promise<ApnsPeer> {
  const now = options.now ?? Date.now;
  const scripts = new Map<string, ApnsScripted[]>();
  const server = createSecureServer({ ...peerTls(), allowHTTP1: false });
  let inFlight = 0;
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });

  async function handle(headers: IncomingHttpHeaders, body: string): Promise<ApnsScripted> {
    const refuse = (status: number, reason: string) => {
      peer.refused.push({ status, reason });
      return { status, reason };
    };
    const deviceToken = /^\/3\/device\/([0-9a-fA-F]+)$/.exec(String(headers[':path']))?.[1];
    if (headers[':method'] !== 'POST') return refuse(405, 'MethodNotAllowed');
    if (!deviceToken) return refuse(404, 'BadPath');
    const bearer = /^bearer (.+)$/.exec(String(headers.authorization ?? ''))?.[1];
    if (!bearer) return refuse(403, 'MissingProviderToken');
    peer.providerTokens.push(bearer);
    try {
      if (decodeProtectedHeader(bearer).kid !== options.key.keyId) return refuse(403, 'InvalidProviderToken');
      const { payload } = await jwtVerify(bearer, options.key.publicKey, {
        algorithms: ['ES256'],
        issuer: options.teamId,
        requiredClaims: ['iat'],
        currentDate: new Date(now()),
      });
      if (now() / 1000 - (payload.iat as number) > 3600) return refuse(403, 'ExpiredProviderToken');
    } catch {
      return refuse(403, 'InvalidProviderToken');
    }
    if (headers['apns-topic'] !== options.topic) return refuse(400, 'TopicDisallowed');
    if (!['alert', 'background'].includes(String(headers['apns-push-type'])))
      return refuse(400, 'InvalidPushType');
    if (!['5', '10'].includes(String(headers['apns-priority']))) return refuse(400, 'BadPriority');
    const next = scripts.get(deviceToken)?.shift();
    if (next) return next;
    peer.received.push({ deviceToken, headers, payload: JSON.parse(body), providerToken: bearer });
    return { status: 200 };
  }

  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    inFlight++;
    peer.maxInFlight = Math.max(peer.maxInFlight, inFlight);
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', async () => {
      const answer: ApnsScripted = await handle(headers, Buffer.concat(chunks).toString()).catch(() => ({
        status: 500,
        reason: 'InternalServerError',
      }));
      if (peer.holdMs > 0) await new Promise((r) => setTimeout(r, peer.holdMs));
      inFlight--;
      if (stream.destroyed) return;
      const apnsId = String(headers['apns-id'] ?? randomUUID());
      stream.respond({
        [constants.HTTP2_HEADER_STATUS]: answer.status,
        'apns-id': apnsId,
        ...answer.headers,
      });
      stream.end(answer.status === 200 ? '' : JSON.stringify({ reason: answer.reason }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  const peer: ApnsPeer = {
    host: `https://localhost:${(server.address() as AddressInfo).port}`,
    received: [],
    providerTokens: [],
    refused: [],
    maxInFlight: 0,
    holdMs: 0,
    script(deviceToken, ...answers) {
      scripts.set(deviceToken, [...(scripts.get(deviceToken) ?? []), ...answers]);
    },
    close: () =>
      new Promise((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
  return peer;
}
