import type { Clock } from '../clock.ts';
import type { Provider } from '../providers/types.ts';
import { BULK_SHARE, LOW_SHARE, type Rank } from '../reserve.ts';
import type { LimitStore } from '../store/port/limits.ts';
import type { Circuit } from './circuit.ts';
import type { RateLimiter } from './rate-window.ts';

/**
 * Provider limits shared by every worker process through the database (scale-out). Each worker
 * keeps a small local pool of tokens that `sync()` tops up from the provider's shared bucket
 * once per scheduler step, so N workers together send at the provider's rate, not N times it,
 * at the cost of one statement per step. Circuits: a worker that opens a provider's circuit
 * publishes until when; the others hold that provider back too, without spending attempts.
 */
export interface SharedLimits {
  /** This worker's share of `provider`'s shared bucket (checked beside its own window). */
  bucket(provider: Provider): RateLimiter;
  /**
   * Wraps the worker's own circuit for `provider` (or for one of its narrower keys, such as a
   * push-service origin) so it also obeys openings published by others.
   */
  circuit(provider: Provider, local: Circuit, narrowKey?: string): Circuit;
  /** Tops up the pools, publishes this worker's circuit changes and reads everyone's. */
  sync(): Promise<void>;
}

const keyOf = (provider: Provider) => `${provider.channel}:${provider.name}`;

/** One bucket's local pool of tokens. */
interface Pool {
  ratePerSecond: number;
  burst: number;
  tokens: number;
}

/** The buckets of a provider: the whole rate, NORMAL and LOW's share, LOW's share. */
const TIERS = [
  { suffix: '', share: 1 },
  { suffix: '#bulk', share: BULK_SHARE },
  { suffix: '#low', share: LOW_SHARE },
];

/** `poolSize`: most tokens one worker holds at once (the scheduler's claim batch is a good size). */
export function createSharedLimits(limits: LimitStore, clock: Clock, poolSize: number): SharedLimits {
  const pools = new Map<string, Pool>();
  const openUntil = new Map<string, number>();
  const outbox = new Map<string, number | null>();
  const sharedOpen = (key: string) => {
    const until = openUntil.get(key);
    return until !== undefined && until > clock.now() ? until : undefined;
  };

  return {
    bucket(provider) {
      // Three buckets per provider: everyone draws on the whole rate, NORMAL and LOW also on a
      // three-quarter one, LOW also on a half one, so bulk sends across all workers never take
      // the share reserved for CRITICAL and HIGH (reserve.ts).
      const tiers = TIERS.map(({ suffix, share }) => {
        const pool: Pool = {
          ratePerSecond: provider.limits.ratePerSecond * share,
          burst: Math.max(1, Math.floor(provider.limits.burst * share)),
          tokens: 0,
        };
        pools.set(`${keyOf(provider)}${suffix}`, pool);
        return pool;
      });
      const tiersOf = (rank: Rank) => tiers.slice(0, rank <= 1 ? 1 : rank === 2 ? 2 : 3);
      return {
        available: (rank) => Math.min(...tiersOf(rank).map((pool) => Math.floor(pool.tokens))),
        tryTake(rank) {
          const mine = tiersOf(rank);
          if (mine.some((pool) => pool.tokens < 1)) return false;
          for (const pool of mine) pool.tokens -= 1;
          return true;
        },
        // The next top-up comes with the next step; until then, one token's worth of refill.
        waitMs: (rank) =>
          Math.max(
            ...tiersOf(rank).map((pool) => (pool.tokens >= 1 ? 0 : Math.ceil(1000 / pool.ratePerSecond))),
          ),
      };
    },
    circuit(provider, local, narrowKey) {
      const key = narrowKey === undefined ? keyOf(provider) : `${keyOf(provider)}:${narrowKey}`;
      const publishIfOpened = () => {
        if (local.state === 'open') outbox.set(key, local.retryAt());
      };
      return {
        get state() {
          return sharedOpen(key) === undefined ? local.state : 'open';
        },
        allow: () => sharedOpen(key) === undefined && local.allow(),
        retryAt: () => Math.max(local.retryAt(), sharedOpen(key) ?? 0),
        capacity: () => (sharedOpen(key) === undefined ? local.capacity() : 0),
        success() {
          const wasOpen = local.state !== 'closed' || openUntil.has(key);
          local.success();
          if (wasOpen) outbox.set(key, null);
        },
        failure() {
          local.failure();
          publishIfOpened();
        },
        pause() {
          local.pause();
          publishIfOpened();
        },
      };
    },
    async sync() {
      // Only real providers share limits (the sandbox has none worth a query).
      if (pools.size === 0) return;
      const now = clock.now();
      for (const [key, until] of outbox) await limits.setCircuit(key, until, now);
      outbox.clear();
      const requests = [...pools.entries()]
        .map(([key, pool]) => ({
          key,
          pool,
          want: Math.min(poolSize, pool.burst) - Math.floor(pool.tokens),
        }))
        .filter((r) => r.want > 0);
      const granted = await limits.takeTokens(
        requests.map((r) => ({
          key: r.key,
          want: r.want,
          ratePerSecond: r.pool.ratePerSecond,
          burst: r.pool.burst,
        })),
        now,
      );
      requests.forEach((r, i) => {
        r.pool.tokens += granted[i] ?? 0;
      });
      openUntil.clear();
      for (const circuit of await limits.openCircuits(now)) openUntil.set(circuit.key, circuit.openUntil);
    },
  };
}
