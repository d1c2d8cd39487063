import type { Clock } from './clock.ts';
import type { Config } from './config/config.ts';
import type { Store } from './store/port/index.ts';

/**
 * What every part of Herald is built from. Route modules and roles name what they need on top
 * of it (`CoreDeps & { ingest: Ingest }`); the composition root (main.ts) builds each part once
 * and passes it explicitly. There is no container and no look-up by key.
 */
export interface CoreDeps {
  config: Config;
  store: Store;
  clock: Clock;
}
