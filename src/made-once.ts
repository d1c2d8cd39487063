/** `make` run once per key, its result kept in `cache` (statements prepared once, keys decoded once). */
export function madeOnce<K, T>(
  cache: { get(key: K): T | undefined; set(key: K, value: T): unknown },
  make: (key: K) => T,
): (key: K) => T {
  return (key) => {
    let made = cache.get(key);
    if (made === undefined) {
      made = make(key);
      cache.set(key, made);
    }
    return made;
  };
}

/** A tiny LRU: Map keeps insertion order, so the first key is the least recently used. */
export function lru<V>(max: number) {
  const map = new Map<string, V>();
  return {
    get(key: string): V | undefined {
      const value = map.get(key);
      if (value !== undefined) {
        map.delete(key);
        map.set(key, value);
      }
      return value;
    },
    set(key: string, value: V) {
      map.set(key, value);
      if (map.size > max) map.delete(map.keys().next().value as string);
    },
  };
}
