import { runChild } from './proc.ts';

/** An open-loop sender: one request every `everyMs` for `forMs`. */
export interface PacedSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
  everyMs: number;
  forMs: number;
}

/** What the paced sender reports: each accepted notification and the first failures. */
export interface PacedResult {
  sent: number;
  accepted: Array<{ id: string; createdAt: string; responseMs: number }>;
  failures: string[];
}

/** Runs bench/paced-sender.ts in its own process. */
export function runPaced(spec: PacedSpec): Promise<PacedResult> {
  return runChild<PacedResult>('bench/paced-sender.ts', spec);
}
