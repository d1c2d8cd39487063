import { get as httpGet } from 'node:http';
import type { Api } from './api.ts';

/** One live stream read in full: each status event's lag, from its change's time to its receipt. */
export interface LagReader {
  /** Milliseconds from each change (its event's `at`) to the arrival of its SSE event. */
  readonly lags: number[];
  close(): void;
}

/**
 * Opens a tenant-wide live stream and parses it (one stream, at a steady rate: its cost does not
 * matter here, unlike the drain's 100 counting readers). Resolves once the stream has answered.
 */
export function followLag(api: Api): Promise<LagReader> {
  const lags: number[] = [];
  const controller = new AbortController();
  return new Promise((resolve, reject) => {
    const request = httpGet(
      `${api.url}/notifications/stream`,
      { headers: api.auth, signal: controller.signal },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(new Error(`GET /notifications/stream: ${response.statusCode}`));
          return;
        }
        let buffer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          const at = Date.now();
          buffer += chunk;
          let end = buffer.indexOf('\n\n');
          while (end !== -1) {
            const data = /^data: (.*)$/m.exec(buffer.slice(0, end))?.[1];
            if (data) lags.push(at - Date.parse((JSON.parse(data) as { event: { at: string } }).event.at));
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf('\n\n');
          }
        });
        response.on('error', () => undefined);
        resolve({ lags, close: () => controller.abort() });
      },
    );
    request.on('error', (error) => {
      if (!controller.signal.aborted) reject(error);
    });
  });
}
