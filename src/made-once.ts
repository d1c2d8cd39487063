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
