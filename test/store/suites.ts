import { readdirSync } from 'node:fs';
import { after } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';

type Suite = (name: string, open: () => Promise<Store>) => void;

/**
 * Runs every store behaviour suite (test/store/*.suite.ts: each exported `...Suite(name, open)`)
 * on one adapter. Found by file name, so an area's new suite runs on both databases without an edit.
 */
export async function runStoreSuites(name: string, open: () => Promise<Store>): Promise<void> {
  const dir = new URL('./', import.meta.url);
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.suite.ts'))
    .sort()) {
    const module = (await import(new URL(file, dir).href)) as Record<string, unknown>;
    for (const [exported, value] of Object.entries(module)) {
      if (exported.endsWith('Suite') && typeof value === 'function') (value as Suite)(name, open);
    }
  }
}

/**
 * A suite's store opener: each call opens a fresh store, and every store it opened is closed
 * after the suite (call it inside the suite's describe).
 */
export function freshStores(open: () => Promise<Store>): () => Promise<Store> {
  const stores: Store[] = [];
  after(async () => {
    for (const store of stores) await store.close();
  });
  return async () => {
    const store = await open();
    stores.push(store);
    return store;
  };
}
