// A Map for what is in flight (requests, calls) whose table starts young with each busy spell.

/**
 * The tables of requests and calls under way live as long as the process, so V8 keeps them in its
 * old generation, and it allocates a Map's replacement table (a shrink when the last entry goes, a
 * rehash when deletes fill it) where the old one was. A Map that goes from one entry to none and
 * back on every call (every call, when calls come one at a time) left old tables behind per call,
 * and the young-generation collector takes what an old object points to as live until a full
 * collection: more of each call's objects were promoted (1.4 KiB per stdio call against 0.2; see
 * docs/benchmarks.md, "Tables of calls in flight").
 *
 * This one is replaced by a new Map when its last entry leaves, so each busy spell starts with a
 * young table. Its loops go over a copy made when they start: an entry deleted or added during a
 * loop does not change which entries it visits.
 */
export class InFlightMap<K, V> implements ReadonlyMap<K, V> {
  private map = new Map<K, V>();

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): this {
    this.map.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    if (this.map.size !== 1 || !this.map.has(key)) return this.map.delete(key);
    this.map = new Map();
    return true;
  }

  clear(): void {
    if (this.map.size > 0) this.map = new Map();
  }

  entries(): MapIterator<[K, V]> {
    return [...this.map.entries()][Symbol.iterator]();
  }

  keys(): MapIterator<K> {
    return [...this.map.keys()][Symbol.iterator]();
  }

  values(): MapIterator<V> {
    return [...this.map.values()][Symbol.iterator]();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  forEach(each: (value: V, key: K, map: ReadonlyMap<K, V>) => void): void {
    for (const [key, value] of this.entries()) each(value, key, this);
  }
}
