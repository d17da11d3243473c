// Lists whose read failed, read again on a timer with a growing delay while their backend is up,
// and resource templates a backend says it has no method for, which are not asked for again.
import type { Upstream } from '../backends/upstream.js';
import { LIST_KINDS, type ListKind } from '../catalog/catalog.js';
import { WireError } from '../errors/errors.js';
import { WIRE } from '../errors/wire-codes.js';
import { messageOf } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';

/** A list whose read failed is read again this long after, twice as long after each failure… */
export const LIST_RETRY_FIRST_MS = 500;
/** …up to this long, for as long as the backend stays up and the read keeps failing. */
export const LIST_RETRY_MOST_MS = 30_000;

/** A backend's list as the maps of catalog-sync.ts and this file key it. */
export const listKey = (backend: string, kind: ListKind): string => `${backend}\0${kind}`;

export interface ListRetriesOptions {
  log: Logger;
  /** Whether the backend is still the one serving its name (a reload may have replaced it). */
  isCurrent: (backend: Upstream) => boolean;
  /** Reads the list again (CatalogSync's refresh, which puts what it reads in the catalog). */
  reread: (backend: Upstream, kind: ListKind) => void;
}

export class ListRetries {
  private readonly pending = new Map<
    string,
    { backend: Upstream; timer: NodeJS.Timeout; failures: number }
  >();
  /** Template lists a backend answered -32601 for: not read again on a listing (its next start reads them). */
  private readonly absent = new Set<string>();

  constructor(private readonly o: ListRetriesOptions) {}

  /**
   * A read failed: it is read again after a delay that doubles with each failure
   * (LIST_RETRY_FIRST_MS up to LIST_RETRY_MOST_MS), while the backend is up and still the one
   * serving its name; one that goes down has its lists read when it is back (backend-lifecycle.ts).
   * Said once as a warning, later failures at debug level. Not for a method the backend says it
   * does not have.
   */
  failed(backend: Upstream, kind: ListKind, err: unknown): void {
    const key = listKey(backend.name, kind);
    const found = this.pending.get(key);
    if (found) clearTimeout(found.timer);
    // Another backend of the name (before a reload; a mesh server that left and came back) counts
    // its failures afresh.
    const prior = found?.backend === backend ? found : undefined;
    const said = { backend: backend.name, method: LIST_KINDS[kind].method, err: messageOf(err) };
    // A server that has no such method for a list its capabilities do not name on their own (the
    // common case: resources declared, templates not served) will not have one later in this run:
    // asking again would only repeat the answer. One that declared `tools` (or prompts, resources)
    // and then says it has no tools/list failed like any other read: it is read again.
    if (err instanceof WireError && err.code === WIRE.METHOD_NOT_FOUND && kind === 'resourceTemplates') {
      this.pending.delete(key);
      this.absent.add(key);
      return this.o.log.warn(said, 'list failed: the backend has no such method');
    }
    const failures = (prior?.failures ?? 0) + 1;
    const inMs = Math.min(LIST_RETRY_FIRST_MS * 2 ** (failures - 1), LIST_RETRY_MOST_MS);
    const timer = setTimeout(() => {
      if (backend.state !== 'ready' || !this.o.isCurrent(backend)) return void this.pending.delete(key);
      this.o.reread(backend, kind);
    }, inMs);
    // Nothing for a stopping process to wait for.
    timer.unref();
    this.pending.set(key, { backend, timer, failures });
    if (failures === 1) this.o.log.warn({ ...said, failures, inMs }, 'list failed; reading it again later');
    else this.o.log.debug({ ...said, failures, inMs }, 'list failed again');
  }

  /** A read succeeded: no more reads of it from here, and a recovery is said. */
  succeeded(backend: Upstream, kind: ListKind): void {
    const key = listKey(backend.name, kind);
    this.absent.delete(key);
    const retry = this.pending.get(key);
    if (!retry) return;
    clearTimeout(retry.timer);
    this.pending.delete(key);
    if (retry.backend === backend)
      this.o.log.info({ backend: backend.name, after: retry.failures }, 'list read after failures');
  }

  /** Whether the list's last read failed and its timer will read it again. */
  retrying(backend: string, kind: ListKind): boolean {
    return this.pending.has(listKey(backend, kind));
  }

  /** Whether the list is one its backend said it has no method for. */
  unserved(backend: string, kind: ListKind): boolean {
    return this.absent.has(listKey(backend, kind));
  }

  /** No more reads (the gateway is stopping). */
  stop(): void {
    for (const retry of this.pending.values()) clearTimeout(retry.timer);
    this.pending.clear();
  }
}
