// The context store as MCP resources for hosts: an in-process catalog source (server `context`)
// whose resources are the entries of the scopes `context.resources.scopes` names, read as JSON,
// subscribed to through the store's watch. Lists, reads and subscriptions are calls like any
// other: resolve, policy (a denied scope's entries are not listed and read as not found), audit.
import type { CallContext } from '../call/context.js';
import type { Lists, Item } from '../catalog/catalog.js';
import type { ContextSection } from '../config/context-schema.js';
import { WIRE, WireError } from '../errors/errors.js';
import type { Result } from '../jsonrpc/message.js';
import type { CatalogSource } from '../pipeline/catalog-source.js';
import { normalUri } from '../policy/uri-normal.js';
import { resourceNotFound } from '../protocol/not-found.js';
import { CONTEXT_SCHEME, CONTEXT_TEMPLATE, contextUri, parseContextUri } from '../context/resource-uri.js';
import type { AnyContextStore } from '../context/any-store.js';
import type { Change } from '../context/store.js';
import { CONTEXT_SERVER } from '../config/built-in-servers.js';

/** The server name context resources are listed under, and what policy rules name in `backends`. */
export const CONTEXT_SOURCE = CONTEXT_SERVER;

/** The `_meta` key of a read's contents: the entry's version and times. */
export const CONTEXT_META = 'io.switchboard/context';

const MIME = 'application/json';

/** How long a change that adds or removes listed entries waits for others before lists are read again. */
const RELIST_MS = 200;

export class ContextResources implements CatalogSource {
  readonly name = CONTEXT_SOURCE;
  readonly uriScheme = CONTEXT_SCHEME;
  private readonly scopes: ReadonlySet<string>;
  /** The URIs resources/list showed last: a write to one of them changes no list. */
  private listed = new Set<string>();
  /** The listing lists() gives: read from the store ahead (a shared store answers later). */
  private listing: Item[] = [];
  private relist: NodeJS.Timeout | undefined;
  private readonly unwatch: (() => void)[] = [];
  private closed = false;

  /** `changed`: tells the gateway to read the lists again. */
  constructor(
    private readonly store: AnyContextStore,
    private readonly config: ContextSection['resources'],
    private readonly changed: () => void,
  ) {
    this.scopes = new Set(config.scopes);
    for (const scope of this.scopes)
      this.unwatch.push(stopper(store.watch(scope, '', (c) => this.noticed(c))));
    this.readAgain();
  }

  lists(): Lists {
    return {
      resources: this.listing,
      resourceTemplates: [
        {
          uriTemplate: CONTEXT_TEMPLATE,
          name: 'context',
          description: `Entries of the shared context store (scopes: ${[...this.scopes].join(', ')}), as JSON`,
          mimeType: MIME,
        },
      ],
    };
  }

  /** Reads the listed entries from the store; once they are in, the gateway reads lists() again. */
  private readAgain(): void {
    this.read().then(
      () => {
        if (!this.closed) this.changed();
      },
      () => {
        // The store is unreachable (a shared one, for now): the last listing stands until the next change.
      },
    );
  }

  private async read(): Promise<void> {
    const resources: Item[] = [];
    const listed = new Set<string>();
    let left = this.config.maxListed;
    for (const scope of this.scopes) {
      let after: string | undefined;
      while (left > 0) {
        const page = await this.store.list(scope, '', Math.min(left, 500), after);
        for (const e of page.entries) {
          const uri = contextUri(scope, e.key);
          // A key with `.` or `..` segments has no URI of its own (normalisation would move it).
          if (!addressable(uri)) continue;
          resources.push({ uri, name: `${scope}/${e.key}`, mimeType: MIME });
          listed.add(uri);
          left--;
        }
        if (page.next === undefined) break;
        after = page.next;
      }
    }
    this.listed = listed;
    this.listing = resources;
  }

  async call(ctx: CallContext): Promise<Result> {
    if (ctx.method === 'completion/complete') return { completion: { values: [], hasMore: false } };
    if (ctx.method !== 'resources/read' || !ctx.target)
      throw new WireError(
        WIRE.METHOD_NOT_FOUND,
        `Context resources answer resources/read, not ${ctx.method}`,
      );
    const uri = ctx.target.name;
    const named = this.named(uri);
    const entry = named && (await this.store.get(named.scope, named.key));
    // What is not there reads as what may not be seen: the error is the same.
    if (!entry) throw resourceNotFound(ctx.params.uri);
    return {
      contents: [
        {
          uri: ctx.params.uri,
          mimeType: MIME,
          text: entry.json,
          _meta: {
            [CONTEXT_META]: {
              scope: entry.scope,
              key: entry.key,
              version: entry.version,
              updatedAt: entry.updatedAt,
              ...(entry.expiresAt !== undefined && { expiresAt: entry.expiresAt }),
            },
          },
        },
      ],
    };
  }

  watch(uri: string, updated: () => void): () => void {
    const named = this.named(uri);
    if (!named) throw resourceNotFound(uri);
    return stopper(
      this.store.watch(named.scope, named.key, (c) => {
        if (c.key === named.key) updated();
      }),
    );
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.relist);
    for (const stop of this.unwatch.splice(0)) stop();
  }

  /** The scope and key of one of its URIs, if the scope is one hosts may reach. */
  private named(uri: string): { scope: string; key: string } | undefined {
    const named = parseContextUri(uri);
    return named && this.scopes.has(named.scope) ? named : undefined;
  }

  /** A write to a listed key changes no list; a new key or one gone does (read again shortly). */
  private noticed(c: Change): void {
    const uri = contextUri(c.scope, c.key);
    const isListed = this.listed.has(uri);
    if (c.op === 'put' ? isListed || this.listed.size >= this.config.maxListed : !isListed) return;
    this.relist ??= setTimeout(() => {
      this.relist = undefined;
      this.readAgain();
    }, RELIST_MS);
    this.relist.unref();
  }
}

function addressable(uri: string): boolean {
  try {
    return normalUri(uri) === uri;
  } catch {
    return false;
  }
}

/** A watch's stop function, whether the store gave it at once or will give it later. */
function stopper(stop: (() => void) | Promise<() => void>): () => void {
  if (typeof stop === 'function') return stop;
  let stopped = false;
  let stopNow: (() => void) | undefined;
  stop.then(
    (f) => (stopped ? f() : (stopNow = f)),
    () => {},
  );
  return () => {
    stopped = true;
    stopNow?.();
  };
}
