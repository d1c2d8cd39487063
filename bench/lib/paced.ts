import { notification } from './bodies.ts';
import { runChild } from './proc.ts';

/** An open-loop sender: one POST to `path` every `everyMs` for `forMs`. */
export interface PacedSpec {
  url: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  everyMs: number;
  forMs: number;
  /** Keep each accepted notification's id and createdAt (single POSTs only). */
  collect: boolean;
}

/** What the paced sender reports. */
export interface PacedResult {
  /** Requests sent. */
  sent: number;
  /** Notifications accepted (a batch counts its accepted items). */
  acceptedCount: number;
  /** With `collect`: each accepted notification. */
  accepted: Array<{ id: string; createdAt: string; responseMs: number }>;
  failures: string[];
  seconds?: number;
}

/** Runs bench/paced-sender.ts in its own process. */
export function runPaced(spec: PacedSpec): Promise<PacedResult> {
  return runChild<PacedResult>('bench/paced-sender.ts', spec);
}

/**
 * One CRITICAL POST /notifications to `url` every `everyMs` for `forMs`, each accepted one kept:
 * the sender of the CRITICAL latency figures (isolation-latency.ts reads them back).
 */
export function pacedCritical(
  url: string,
  headers: Record<string, string>,
  everyMs: number,
  forMs: number,
): Promise<PacedResult> {
  const body = JSON.stringify(notification('CRITICAL'));
  return runPaced({ url, path: '/notifications', headers, body, everyMs, forMs, collect: true });
}
