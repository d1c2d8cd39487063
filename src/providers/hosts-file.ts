import type { LookupAddress } from 'node:dns';
import { readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';

/** Looked at again at most this often (its modification time), so an edit is seen. */
const RECHECK_MS = 1000;

let cached: { path: string; mtimeMs: number; byName: Map<string, LookupAddress[]> } | undefined;
let checkedAt = Number.NEGATIVE_INFINITY;

function parse(text: string): Map<string, LookupAddress[]> {
  const byName = new Map<string, LookupAddress[]>();
  for (const line of text.split('\n')) {
    const [address = '', ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    const family = isIP(address);
    if (!family) continue;
    for (const name of names) {
      const key = name.toLowerCase();
      byName.set(key, [...(byName.get(key) ?? []), { address, family }]);
    }
  }
  return byName;
}

/**
 * The addresses the hosts file gives a name, as the system's resolver would find them first
 * (`files` before `dns`), read without the system's lookup and its thread pool; none when the
 * file does not name it or cannot be read.
 */
export function hostsFileAddresses(name: string, path = '/etc/hosts'): LookupAddress[] {
  const now = performance.now();
  if (cached?.path !== path || now - checkedAt >= RECHECK_MS) {
    checkedAt = now;
    try {
      const { mtimeMs } = statSync(path);
      if (cached?.path !== path || cached.mtimeMs !== mtimeMs) {
        cached = { path, mtimeMs, byName: parse(readFileSync(path, 'utf8')) };
      }
    } catch {
      cached = { path, mtimeMs: Number.NaN, byName: new Map() };
    }
  }
  return cached?.byName.get(name.toLowerCase()) ?? [];
}
