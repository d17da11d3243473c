// Hosts' resource subscriptions carried to the backends: a legacy backend is sent
// resources/subscribe and unsubscribe, once per URI however many hold it; a modern backend keeps
// one subscriptions/listen stream from switchboard that names every URI held on it.
import type { ListenFilter } from '../backends/backend.js';
import type { Upstream } from '../backends/upstream.js';
import type { CallContext } from '../call/context.js';
import { WIRE, WireError } from '../errors/errors.js';
import type { Result } from '../jsonrpc/message.js';
import { messageOf } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import type { Subscriptions } from './subscriptions.js';
import type { CatalogSource } from '../pipeline/catalog-source.js';

export interface BackendSubscriptionsDeps {
  /** Who holds which URI on which backend. */
  subscriptions: Subscriptions;
  /** The running backend of that name. */
  backend(name: string): Upstream | undefined;
  log: Logger;
  /** A resource of an in-process source changed (its own URI): its subscribers hear it. */
  sourceUpdated?(source: string, uri: string): void;
}

export class BackendSubscriptions {
  /** The stop of each in-process source's watch, by source and URI, while anyone holds it. */
  private readonly watching = new Map<string, () => void>();

  constructor(private readonly deps: BackendSubscriptionsDeps) {}

  /**
   * resources/subscribe and unsubscribe on an in-process source's resource: held in the same
   * table as a backend's (sessions and listen streams alike), the source watching the URI while
   * anyone holds it.
   */
  source(ctx: CallContext, source: CatalogSource, uri: string, subscribe: boolean): Result {
    const watch = source.watch?.bind(source);
    if (!watch)
      throw new WireError(WIRE.METHOD_NOT_FOUND, `${source.name} does not take resource subscriptions`);
    const key = `${source.name}\n${uri}`;
    if (!subscribe) {
      if (this.deps.subscriptions.remove(source.name, uri, ctx.reply.sessionKey)) this.unwatch(key);
      return {};
    }
    if (this.deps.subscriptions.add(source.name, uri, ctx.reply.sessionKey) && !this.watching.has(key)) {
      try {
        this.watching.set(
          key,
          watch(uri, () => this.deps.sourceUpdated?.(source.name, uri)),
        );
      } catch (err) {
        // Nothing there to watch (the source refused the URI): nobody holds it.
        this.deps.subscriptions.remove(source.name, uri, ctx.reply.sessionKey);
        throw err;
      }
    }
    return {};
  }

  private unwatch(key: string): void {
    const stop = this.watching.get(key);
    this.watching.delete(key);
    stop?.();
  }

  async subscribe(ctx: CallContext, backend: Upstream, uri: string): Promise<Result> {
    if (
      !backend.capabilities.resources ||
      !(backend.capabilities.resources as { subscribe?: boolean }).subscribe
    ) {
      throw new WireError(
        WIRE.METHOD_NOT_FOUND,
        `Backend ${backend.name} does not support resource subscriptions`,
      );
    }
    if (!this.deps.subscriptions.add(backend.name, uri, ctx.reply.sessionKey)) return {};
    try {
      if (!backend.isModern) return await backend.call(ctx, 'resources/subscribe', { ...ctx.params, uri });
      const honoured = await this.listenTo(backend);
      if (!honoured.resourceSubscriptions?.includes(uri))
        throw new WireError(
          WIRE.INVALID_PARAMS,
          `Backend ${backend.name} does not take subscriptions to ${uri}`,
        );
      return {};
    } catch (err) {
      this.deps.subscriptions.remove(backend.name, uri, ctx.reply.sessionKey);
      throw err;
    }
  }

  async unsubscribe(ctx: CallContext, backend: Upstream, uri: string): Promise<Result> {
    if (!this.deps.subscriptions.remove(backend.name, uri, ctx.reply.sessionKey)) return {};
    if (!backend.isModern) return backend.call(ctx, 'resources/unsubscribe', { ...ctx.params, uri });
    await this.listenTo(backend);
    return {};
  }

  /** Gives back what a session or a listen stream subscribed to that nobody else holds. */
  release(key: string): void {
    const relisten = new Set<Upstream>();
    for (const { backend, uri } of this.deps.subscriptions.removeSession(key)) {
      if (this.watching.has(`${backend}\n${uri}`)) this.unwatch(`${backend}\n${uri}`);
      const b = this.deps.backend(backend);
      if (b?.state !== 'ready') continue;
      if (b.isModern) relisten.add(b);
      else void b.request('resources/unsubscribe', { uri }).catch(() => {});
    }
    for (const b of relisten) void this.listenTo(b);
  }

  /**
   * A modern backend announces changes only on a subscriptions/listen stream: switchboard keeps
   * one open to it, asking for the list changes its capabilities offer and the resource updates
   * hosts subscribed to. Resolves with what the backend acknowledged.
   */
  async listenTo(b: Upstream): Promise<ListenFilter> {
    if (!b.isModern) return {};
    const wants = (cap: string) =>
      (b.capabilities[cap] as { listChanged?: boolean } | undefined)?.listChanged === true;
    const uris = this.deps.subscriptions.uris(b.name);
    const filter: ListenFilter = {
      ...(wants('tools') ? { toolsListChanged: true } : {}),
      ...(wants('prompts') ? { promptsListChanged: true } : {}),
      ...(wants('resources') ? { resourcesListChanged: true } : {}),
      ...(uris.length ? { resourceSubscriptions: uris } : {}),
    };
    if (Object.keys(filter).length === 0) return {};
    return b.listen(filter).catch((err: unknown) => {
      this.deps.log.warn({ backend: b.name, err: messageOf(err) }, 'backend refused subscriptions/listen');
      return {};
    });
  }

  /** Subscribes a legacy backend that came back again to every URI hosts still hold on it. */
  async renew(b: Upstream): Promise<void> {
    for (const uri of b.isModern ? [] : this.deps.subscriptions.uris(b.name)) {
      await b.request('resources/subscribe', { uri }).catch((err: unknown) => {
        this.deps.log.warn({ backend: b.name, uri, err: messageOf(err) }, 'could not renew a subscription');
      });
    }
  }
}
