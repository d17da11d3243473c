// The target node's side: a door like the bridge, whose callers are other nodes' callers. Each
// message's assertion is verified (a refusal is still a call through the pipeline, so it is
// audited), the caller is named `<kind>:<id>@<node>` to this node's policy, and the request runs
// through this node's own pipeline, addressed to one of its own servers by its exposed names.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Caller } from '../call/context.js';
import { muteReply } from '../call/mute-reply.js';
import { newCall } from '../call/new-call.js';
import type { Catalog, Item } from '../catalog/catalog.js';
import { exposedName } from '../catalog/naming.js';
import { WIRE, WireError } from '../errors/errors.js';
import type { Gateway } from '../gateway/gateway.js';
import {
  classify,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type Params,
  type RequestId,
  type Result,
} from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import { doorListen } from './door-listen.js';
import { digestOf, remoteCaller, routedMessage, type AssertionVerifier } from './assertion.js';
import { decodeEnvelope, type Envelope } from './envelope.js';
import { MESH_CALL_META, NODE_REFUSED, STALE_SESSION, type Subjects } from './subjects.js';
import { textOf } from '../encoding/text-of.js';
import { LazyAbort } from '../jsonrpc/lazy-abort.js';

export interface DoorOptions {
  nc: NatsConnection;
  subjects: Subjects;
  self: string;
  gateway: Gateway;
  verifier: AssertionVerifier;
  /** Whether a server is this node's own (not one another node serves through it). */
  isLocal(server: string): boolean;
  log: Logger;
}

const LISTS: Record<string, { key: string; kind: 'tools' | 'prompts' | 'resources' | 'templates' }> = {
  'tools/list': { key: 'tools', kind: 'tools' },
  'prompts/list': { key: 'prompts', kind: 'prompts' },
  'resources/list': { key: 'resources', kind: 'resources' },
  'resources/templates/list': { key: 'resourceTemplates', kind: 'templates' },
};

export class MeshDoor {
  private sub: Subscription | undefined;
  /** Requests under way, by sender inbox and id: what a cancellation names. */
  private readonly running = new Map<string, LazyAbort>();

  constructor(private readonly o: DoorOptions) {}

  start(): void {
    this.sub = this.o.nc.subscribe(this.o.subjects.rpc(this.o.self), {
      callback: (err, msg) => {
        if (err) return;
        const envelope = decodeEnvelope(msg.string());
        if ('why' in envelope) return void this.o.log.warn({ why: envelope.why }, 'mesh message dropped');
        let parsed: unknown;
        try {
          parsed = JSON.parse(envelope.msg);
        } catch {
          return void this.o.log.warn({ from: envelope.from }, 'mesh message that is not JSON dropped');
        }
        // Read as any peer's message is (ids, shapes, depth); nothing is answered to a message
        // that is not one, since its inbox is not verified yet.
        const c = classify(parsed);
        if (c.kind === 'invalid')
          return void this.o.log.warn({ from: envelope.from, why: c.reason }, 'mesh message dropped');
        void this.receive(envelope, c.message).catch((e: unknown) =>
          this.o.log.error({ err: (e as Error).message, from: envelope.from }, 'mesh message failed'),
        );
      },
    });
  }

  stop(): void {
    this.sub?.unsubscribe();
    for (const ac of this.running.values()) ac.abort(new WireError(WIRE.REQUEST_CANCELLED, 'node leaving'));
  }

  private async receive(e: Envelope, message: JsonRpcMessage): Promise<void> {
    let verdict = this.o.verifier.verify(e.from, e.jws, routedMessage(e.server, e.inbox, e.msg));
    // Answers go back only to an inbox of the node that vouched for the call.
    if (verdict.ok && !e.inbox.startsWith(this.o.subjects.inbox(e.from, '')))
      verdict = { ok: false, why: `answers must go to an inbox of node ${e.from}` };
    const isRequest = 'method' in message && 'id' in message;
    if (!verdict.ok) {
      // Unauthenticated: each name is cut short, so a forged message cannot make a long log line.
      const [from, server] = [e.from.slice(0, 100), e.server.slice(0, 100)];
      const method = isRequest ? message.method.slice(0, 100) : undefined;
      const why = verdict.why.slice(0, 300);
      this.o.log.warn({ from, server, method, why }, 'mesh caller assertion refused');
      const reason = verdict.stale
        ? STALE_SESSION
        : verdict.ofNode
          ? NODE_REFUSED
          : verdict.replayed && 'replayed';
      if (isRequest) await this.refuse(e, message as JsonRpcRequest, verdict.why, reason);
      return;
    }
    const caller = remoteCaller(verdict.claims.sub, e.from);
    if (!caller) {
      if (isRequest) await this.refuse(e, message as JsonRpcRequest, `unusable caller ${verdict.claims.sub}`);
      return;
    }
    if (!('method' in message)) return;
    if (message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      this.running.get(`${e.inbox} ${textOf(id)}`)?.abort(new WireError(WIRE.REQUEST_CANCELLED, 'cancelled'));
      return;
    }
    if (!isRequest) return;
    await this.serve(e, message as JsonRpcRequest, caller, verdict.claims.call);
  }

  /**
   * A refused assertion: a call through the pipeline that the protocol stage refuses (audited). A
   * refusal with a reason names the assertion it refused, so its sender acts only on a refusal of
   * what it sent (subjects.ts). A replay's refusal names no request (id null): its sender never
   * sends one message twice, and the original, perhaps still under way, must not end with it.
   */
  private async refuse(
    e: Envelope,
    req: JsonRpcRequest,
    why: string,
    reason?: typeof STALE_SESSION | typeof NODE_REFUSED | 'replayed',
  ): Promise<void> {
    const error = new WireError(WIRE.AUTH_FAILED, `mesh caller assertion refused: ${why}`);
    const ctx = newCall({
      caller: { kind: 'host', id: `unverified@${e.from}` },
      method: req.method,
      requestId: req.id,
      params: req.params ?? {},
      reply: muteReply({ sessionKey: `mesh:${e.from}`, era: 'modern' }),
      refusal: error,
      mesh: { node: e.from },
    });
    await this.o.gateway.run(ctx).catch(() => {});
    this.send(e.inbox, {
      jsonrpc: '2.0',
      id: reason === 'replayed' ? null : req.id,
      error: {
        code: error.code,
        message: error.message,
        ...(reason && reason !== 'replayed' && { data: { reason, assertion: digestOf(e.jws ?? '') } }),
      },
    });
  }

  private async serve(e: Envelope, req: JsonRpcRequest, caller: Caller, remoteCallId: string): Promise<void> {
    const catalog = this.o.gateway.catalog;
    if (!this.o.isLocal(e.server)) {
      const message = `node ${this.o.self} serves no server ${e.server}`;
      return this.send(e.inbox, {
        jsonrpc: '2.0',
        id: req.id,
        error: { code: WIRE.BACKEND_UNAVAILABLE, message },
      });
    }
    const key = `${e.inbox} ${textOf(req.id)}`;
    const ac = new LazyAbort();
    this.running.set(key, ac);
    try {
      let params = exposedParams(catalog, e.server, req.method, req.params ?? {});
      // A listen stream names the server's resources: in this node's names here, its own there.
      const listen =
        req.method === 'subscriptions/listen' ? doorListen(catalog, e.server, params) : undefined;
      if (listen) params = listen.params;
      let callId: string | undefined;
      const answer = await this.o.gateway.modern.serve({ ...req, params }, caller, {
        notify: (n) => this.send(e.inbox, listen ? listen.back(n) : n),
        signal: ac,
        mesh: { node: e.from, remoteCallId },
        began: (id) => (callId = id),
      });
      if (!answer) return;
      const out = answer.message;
      const list = LISTS[req.method];
      if (list && 'result' in out) out.result = ownList(catalog, e.server, list, out.result);
      // The entry node's audit names the call this answer came from here.
      if ('result' in out && callId !== undefined)
        out.result = {
          ...out.result,
          _meta: { ...out.result._meta, [MESH_CALL_META]: { node: this.o.self, callId } },
        };
      this.send(e.inbox, out);
    } finally {
      this.running.delete(key);
    }
  }

  /** To the sender's inbox, on this node's subject there (the entry node tells nodes apart by it). */
  private send(inbox: string, message: JsonRpcMessage): void {
    try {
      this.o.nc.publish(`${inbox}.${this.o.self}`, JSON.stringify(message));
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message }, 'mesh answer could not be sent');
    }
  }
}

/** The server's own names and URIs, as the entry node sent them, made this node's exposed ones. */
function exposedParams(catalog: Catalog, server: string, method: string, params: Params): Params {
  if (method === 'tools/call' || method === 'prompts/get') {
    const kind = method === 'tools/call' ? 'tools' : 'prompts';
    const own = textOf(params.name);
    // The name it is exposed by here, looked up directly: no pass over the whole list per call.
    const ns = catalog.namespaces.get(server);
    const direct = ns && exposedName(ns, own);
    const hit = direct === undefined ? undefined : catalog.resolve(kind, direct);
    if (hit?.backend === server && hit.name === own) return { ...params, name: direct };
    const items = catalog.list(kind)[kind] as Item[];
    const item = items.find((i) => {
      const t = catalog.ownerOf(i);
      return t?.backend === server && t.name === own;
    });
    // A name the server does not list stays as sent: resolve refuses it like any unknown name.
    return item ? { ...params, name: item.name } : { ...params, name: `${server}/${own}` };
  }
  if (typeof params.uri === 'string' && method.startsWith('resources/'))
    return { ...params, uri: catalog.exposeUri(server, params.uri) };
  return params;
}

/** A list as this node's policy let the caller see it, cut to the one server, in its own names. */
function ownList(
  catalog: Catalog,
  server: string,
  list: { key: string; kind: 'tools' | 'prompts' | 'resources' | 'templates' },
  result: Result,
): Result {
  const items = (result[list.key] as Item[] | undefined) ?? [];
  const ns = catalog.namespaces.get(server);
  const out: Item[] = [];
  for (const item of items) {
    if (list.kind === 'tools' || list.kind === 'prompts') {
      const t = catalog.resolve(list.kind, String(item.name));
      if (t?.backend === server) out.push({ ...item, name: t.name });
    } else if (list.kind === 'resources') {
      const t = catalog.resolveUri(String(item.uri));
      if (t && 'backend' in t && t.backend === server) out.push({ ...item, uri: t.name });
    } else {
      const template = String(item.uriTemplate);
      const owner = catalog.ownerOf(item);
      const prefix = ns?.prefixed ? `${ns.uriPrefix}+` : undefined;
      if (owner?.backend === server) out.push({ ...item, uriTemplate: owner.name });
      else if (prefix && template.startsWith(prefix))
        out.push({ ...item, uriTemplate: template.slice(prefix.length) });
    }
  }
  // Served whole: the page stage does not page another node's reads, so there is no cursor.
  return { ...result, [list.key]: out };
}
