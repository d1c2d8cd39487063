import type { FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';
import { iso } from '../clock.ts';

/** How logs are written (HERALD_LOG_FORMAT, resolved by loadConfig). */
export type LogFormat = 'pretty' | 'json';

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
const COLORS: Record<number, string> = { 40: '\x1b[33m', 50: '\x1b[31m', 60: '\x1b[31m' };

/**
 * One readable line per pino entry, for a person at a terminal: time, level, message, the
 * request's method, path, status and duration, then the other fields as key=value, and a stack
 * when there is one. It reformats what pino already redacted, so nothing secret reappears.
 */
export function prettyStream(out: { write(text: string): unknown } = process.stdout) {
  return {
    write(line: string) {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line);
      } catch {
        out.write(line);
        return;
      }
      const { level, time, msg, pid, hostname, reqId, req, res, responseTime, err, ...rest } = entry as {
        level: number;
        time: number;
        msg?: string;
        req?: { method: string; url: string };
        res?: { statusCode: number };
        responseTime?: number;
        err?: { stack?: string };
        [key: string]: unknown;
      };
      const name = (LEVELS[level] ?? String(level)).padEnd(5);
      const parts = [iso(time).slice(11, 23), COLORS[level] ? `${COLORS[level]}${name}\x1b[0m` : name];
      if (msg) parts.push(msg);
      if (req) parts.push(`${req.method} ${req.url}`);
      if (res) parts.push(String(res.statusCode));
      if (typeof responseTime === 'number') parts.push(`${responseTime.toFixed(1)} ms`);
      for (const [key, value] of Object.entries(rest)) {
        parts.push(`${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
      }
      out.write(`${parts.join(' ')}${err?.stack ? `\n${err.stack}` : ''}\n`);
    },
  };
}

/**
 * pino options shared by every app. The request serializer drops the query string, all headers
 * and an unsubscribe or preferences token, so tokens (even ones wrongly sent in a URL), passwords and secrets
 * never reach a log.
 * With the pretty format, entries go through prettyStream.
 */
export function loggerOptions(level: string, format: LogFormat = 'json') {
  return {
    level,
    ...(format === 'pretty' ? { stream: prettyStream() } : {}),
    redact: {
      paths: [
        'req.headers.authorization',
        '*.password',
        '*.client_secret',
        '*.refresh_token',
        '*.access_token',
      ],
      censor: '[redacted]',
    },
    serializers: {
      req(request: FastifyRequest) {
        return {
          id: request.id,
          method: request.method,
          // An unsubscribe or preferences link's token is a credential for that recipient (under
          // the gateway's /api too).
          url: request.url
            .split('?')[0]
            ?.replace(/^(\/api)?\/(unsubscribe|preferences)\/[^/]+/, '$1/$2/[redacted]'),
          remoteAddress: request.ip,
        };
      },
    },
  };
}

/** A logger outside the HTTP apps (the worker), with the same options. */
export function createLogger(level: string, format: LogFormat = 'json'): Logger {
  const { stream, ...options } = loggerOptions(level, format);
  return stream ? pino(options, stream) : pino(options);
}
