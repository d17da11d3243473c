// The context store in a JetStream KV bucket shared by the mesh's nodes: a key's version is its KV
// revision (bucket-wide, increasing), compare-and-set is a write conditioned on the key's last
// revision, a TTL rides with the value (the server, v2.9, has no per-message TTL) and expired keys
// are purged by whichever node sweeps first. Each node follows the bucket: listing, usage (checked
// before a write) and watching are served from that copy; reads and writes go to the server.
import type { KV } from '@nats-io/kv';
import type { AnyContextStore } from '../../context/any-store.js';
import {
  ContextStoreError,
  type Change,
  type ChangeListener,
  type Entry,
  type Page,
  type PutOptions,
  type Usage,
} from '../../context/store.js';
import { Watchers } from '../../context/watchers.js';
import { followBucket, type Followed, type Following } from './follow-bucket.js';
import { isWrongSequence, type MeshState } from './mesh-state.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
const unb64 = (s: string) => Buffer.from(s, 'base64url').toString('utf8');
/** KV keys allow letters, digits, `-_=/.`: scope and key are each one base64url token. */
const kvKey = (scope: string, key: string) => `${b64(scope)}.${b64(key)}`;

/** A stored value: a first line `<updatedAt> <expiresAt or ->`, then the JSON text. */
function encode(json: string, updatedAt: number, expiresAt: number | undefined): string {
  return `${updatedAt} ${expiresAt ?? '-'}\n${json}`;
}

interface Held {
  json: string;
  bytes: number;
  version: number;
  updatedAt: number;
  expiresAt: number | undefined;
}

function decode(data: Uint8Array, version: number): Held {
  const text = Buffer.from(data).toString('utf8');
  const nl = text.indexOf('\n');
  const [u, e] = text.slice(0, nl).split(' ');
  const json = text.slice(nl + 1);
  return {
    json,
    bytes: Buffer.byteLength(json),
    version,
    updatedAt: Number(u),
    expiresAt: e === '-' || e === undefined ? undefined : Number(e),
  };
}

const live = (h: Held, now: number) => h.expiresAt === undefined || h.expiresAt > now;

function entryOf(scope: string, key: string, h: Held): Entry {
  return {
    scope,
    key,
    json: h.json,
    version: h.version,
    updatedAt: h.updatedAt,
    ...(h.expiresAt !== undefined && { expiresAt: h.expiresAt }),
  };
}

function conflict(scope: string, key: string, expected: number, version: number): ContextStoreError {
  return new ContextStoreError(
    'conflict',
    `Version conflict on ${scope}/${key}: expected ${expected}, it is ${version}`,
    { scope, key, expected, version },
  );
}

export class KvContextStore implements AnyContextStore {
  /** This node's copy of the bucket: scope → key → value. */
  private readonly copy = new Map<string, Map<string, Held>>();
  private readonly usageOf = new Map<string, Usage>();
  private readonly watchers = new Watchers();
  private following: Promise<{ kv: KV; follow: Following }> | undefined;

  constructor(private readonly state: MeshState) {}

  /** The bucket, once this node's copy of it has caught up. */
  private async kv(): Promise<KV> {
    this.following ??= (async () => {
      const kv = await this.state.bucket('context');
      const follow = await followBucket(kv, '>', (e) => this.applied(e), this.state.skipped);
      await follow.ready;
      return { kv, follow };
    })();
    this.following.catch(() => (this.following = undefined));
    return (await this.following).kv;
  }

  /** Starts following the bucket now, so the first call finds the copy ready. */
  open(): Promise<void> {
    return this.kv().then(() => {});
  }

  async get(scope: string, key: string, now = Date.now()): Promise<Entry | undefined> {
    const kv = await this.kv();
    const e = await kv.get(kvKey(scope, key));
    if (!e || e.operation !== 'PUT') return undefined;
    const h = decode(e.value, e.revision);
    return live(h, now) ? entryOf(scope, key, h) : undefined;
  }

  async put(scope: string, key: string, json: string, options: PutOptions, now = Date.now()): Promise<Entry> {
    const kv = await this.kv();
    const k = kvKey(scope, key);
    const current = await kv.get(k);
    const held = current?.operation === 'PUT' ? decode(current.value, current.revision) : undefined;
    const version = held && live(held, now) ? held.version : 0;
    if (options.ifVersion !== undefined && options.ifVersion !== version)
      throw conflict(scope, key, options.ifVersion, version);
    // Limits, before writing, from this node's copy (a write racing on another node may overshoot).
    const bytes = Buffer.byteLength(json);
    const fits = (u: Usage, present: Held | undefined) =>
      u.keys + (present ? 0 : 1) <= options.limits.maxKeys &&
      u.bytes + bytes - (present?.bytes ?? 0) <= options.limits.maxBytes;
    let u = this.usageOf.get(scope) ?? { keys: 0, bytes: 0 };
    let present = this.copy.get(scope)?.get(key);
    if (!fits(u, present)) {
      // Expired keys count until swept: count without them before refusing.
      u = this.liveUsage(scope, now);
      present = present && live(present, now) ? present : undefined;
      if (!fits(u, present))
        throw new ContextStoreError(
          'scope_full',
          `Scope ${scope} is full: ${u.keys} keys of ${options.limits.maxKeys}, ${u.bytes} bytes of ${options.limits.maxBytes}; this value is ${bytes} bytes`,
          { scope, keys: u.keys, bytes: u.bytes, ...options.limits, valueBytes: bytes },
        );
    }
    const expiresAt = options.ttlMs === undefined ? undefined : now + options.ttlMs;
    let revision: number;
    try {
      // Conditioned on the revision read above: a write another node made in between is a conflict
      // for a compare-and-set, and for a plain put is read again and written over.
      revision = await kv.put(k, encode(json, now, expiresAt), { previousSeq: current?.revision ?? 0 });
    } catch (err) {
      if (!isWrongSequence(err)) throw err;
      if (options.ifVersion !== undefined) {
        const now2 = await this.get(scope, key);
        throw conflict(scope, key, options.ifVersion, now2?.version ?? 0);
      }
      revision = await kv.put(k, encode(json, now, expiresAt));
    }
    return {
      scope,
      key,
      json,
      version: revision,
      updatedAt: now,
      ...(expiresAt !== undefined && { expiresAt }),
    };
  }

  async delete(scope: string, key: string, ifVersion?: number, now = Date.now()): Promise<boolean> {
    const kv = await this.kv();
    const k = kvKey(scope, key);
    const current = await kv.get(k);
    const held = current?.operation === 'PUT' ? decode(current.value, current.revision) : undefined;
    const version = held && live(held, now) ? held.version : 0;
    if (ifVersion !== undefined && ifVersion !== version) throw conflict(scope, key, ifVersion, version);
    if (!held || !current) return false;
    try {
      // An expired key is purged (its watchers hear `expire`), a live one deleted.
      if (version === 0) await kv.purge(k, { previousSeq: current.revision });
      else await kv.delete(k, { previousSeq: current.revision });
    } catch (err) {
      if (!isWrongSequence(err)) throw err;
      const after = await this.get(scope, key);
      throw conflict(scope, key, ifVersion ?? version, after?.version ?? 0);
    }
    return version !== 0;
  }

  async list(scope: string, prefix: string, limit: number, after = '', now = Date.now()): Promise<Page> {
    await this.kv();
    const keys = [...(this.copy.get(scope)?.entries() ?? [])]
      .filter(([k, h]) => k.startsWith(prefix) && k > after && live(h, now))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const entries = keys.slice(0, limit).map(([k, h]) => entryOf(scope, k, h));
    return { entries, ...(keys.length > limit && { next: entries[entries.length - 1]!.key }) };
  }

  async usage(scope: string): Promise<Usage> {
    await this.kv();
    return { ...(this.usageOf.get(scope) ?? { keys: 0, bytes: 0 }) };
  }

  /** Resolves once the watch is in place: changes from any node after that reach `listener`. */
  async watch(scope: string, prefix: string, listener: ChangeListener): Promise<() => void> {
    await this.kv();
    return this.watchers.add(scope, prefix, listener);
  }

  /** Purges the expired keys this node's copy holds (each only if unchanged since); how many. */
  async sweep(now = Date.now()): Promise<number> {
    const kv = await this.kv();
    let n = 0;
    for (const [scope, keys] of this.copy)
      for (const [key, h] of keys) {
        if (live(h, now)) continue;
        try {
          await kv.purge(kvKey(scope, key), { previousSeq: h.version });
          n++;
        } catch (err) {
          // Written again, or purged by another node first: not ours to purge.
          if (!isWrongSequence(err)) throw err;
        }
      }
    return n;
  }

  async close(): Promise<void> {
    const f = this.following;
    this.following = undefined;
    this.watchers.clear();
    if (f) (await f.catch(() => undefined))?.follow.stop();
  }

  /** Usage of the live keys alone (expired ones not yet swept left out). */
  private liveUsage(scope: string, now: number): Usage {
    const u = { keys: 0, bytes: 0 };
    for (const h of this.copy.get(scope)?.values() ?? [])
      if (live(h, now)) {
        u.keys++;
        u.bytes += h.bytes;
      }
    return u;
  }

  /** A write seen in the bucket (any node's): the copy, the usage and the watchers follow it. */
  private applied(e: Followed): void {
    const dot = e.key.indexOf('.');
    if (dot < 0) return;
    const scope = unb64(e.key.slice(0, dot));
    const key = unb64(e.key.slice(dot + 1));
    let keys = this.copy.get(scope);
    const before = keys?.get(key);
    const usage = this.usageOf.get(scope) ?? { keys: 0, bytes: 0 };
    if (before) {
      usage.keys--;
      usage.bytes -= before.bytes;
    }
    let change: Change;
    if (e.op === 'PUT') {
      const h = decode(e.data, e.revision);
      if (!keys) this.copy.set(scope, (keys = new Map()));
      keys.set(key, h);
      usage.keys++;
      usage.bytes += h.bytes;
      change = { scope, key, op: 'put', version: e.revision, json: h.json };
    } else {
      keys?.delete(key);
      if (keys?.size === 0) this.copy.delete(scope);
      change = {
        scope,
        key,
        op: e.op === 'PURGE' ? 'expire' : 'delete',
        version: before?.version ?? e.revision,
      };
    }
    if (usage.keys === 0) this.usageOf.delete(scope);
    else this.usageOf.set(scope, usage);
    // A key deleted before this node followed the bucket is no change anyone here saw.
    if (e.op !== 'PUT' && !before) return;
    this.watchers.emit(change);
  }
}
