// The shared context store's interface: scopes of versioned keys with TTLs, compare-and-set, paged
// listing and change watching. SQLite implements it (sqlite-store.ts); a distributed store (NATS
// JetStream KV: revisions, TTLs, watch by subject prefix) can implement the same contract.

export interface Entry {
  scope: string;
  key: string;
  /** The value's JSON text, as stored (what size limits count). */
  json: string;
  /**
   * Revision of this write: store-wide and increasing, so a key deleted and written again never
   * repeats a version a compare-and-set could mistake for the old one.
   */
  version: number;
  updatedAt: number;
  /** Epoch ms after which the key is gone (absent: no TTL). */
  expiresAt?: number | undefined;
}

export interface Limits {
  maxKeys: number;
  maxBytes: number;
}

export interface PutOptions {
  /** Compare-and-set: the key's current version must be this (0: the key must not exist). */
  ifVersion?: number | undefined;
  ttlMs?: number | undefined;
  limits: Limits;
}

export interface Change {
  scope: string;
  key: string;
  op: 'put' | 'delete' | 'expire';
  /** The version written, or the version that was deleted or expired. */
  version: number;
  /** The new value's JSON text (put only). */
  json?: string | undefined;
}

export type ChangeListener = (change: Change) => void;

export interface Page {
  entries: Entry[];
  /** Pass as `after` for the next page; absent on the last page. */
  next?: string | undefined;
}

export interface Usage {
  keys: number;
  bytes: number;
}

/** Why a write did not happen: the caller's doing, reported with the facts it needs. */
export class ContextStoreError extends Error {
  constructor(
    readonly reason: 'conflict' | 'scope_full',
    message: string,
    readonly data: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ContextStoreError';
  }
}

export interface ContextStore {
  /** The live entry, or undefined (absent or expired: expired keys are invisible at once). */
  get(scope: string, key: string, now?: number): Entry | undefined;
  /** Writes a value; throws ContextStoreError (conflict, scope_full). */
  put(scope: string, key: string, json: string, options: PutOptions, now?: number): Entry;
  /**
   * Optional: `put`, committed together with the other writes asked for in the same turn of the
   * event loop (group commit); resolves once its commit is done, rejects as `put` throws. A store
   * without it is written with `put`.
   */
  putGrouped?(scope: string, key: string, json: string, options: PutOptions): Promise<Entry>;
  /** Deletes a key; throws on a version mismatch when `ifVersion` is set. Whether it existed. */
  delete(scope: string, key: string, ifVersion?: number, now?: number): boolean;
  /** Live entries whose key starts with `prefix`, in key order, after `after`. */
  list(scope: string, prefix: string, limit: number, after?: string, now?: number): Page;
  usage(scope: string): Usage;
  /** Tells `listener` of every change to keys of `scope` starting with `prefix`; returns the unwatch. */
  watch(scope: string, prefix: string, listener: ChangeListener): () => void;
  /** Deletes expired keys and tells their watchers; how many. */
  sweep(now?: number): number;
}
