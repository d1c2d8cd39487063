import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** A fresh temporary directory, removed by `removeTempDirs` at the end of the run. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `herald-bench-${prefix}-`));
  made.push(dir);
  return dir;
}

/** Removes every directory `tempDir` made (a million-row database is a few hundred MB). */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
