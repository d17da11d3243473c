// The entry node's side of a mesh server: a Channel (what a backend connection talks over) whose
// requests go, signed, to one live node serving the server, and whose answers come back on an
// inbox. A node that goes down fails the calls it held at once, naming it; nothing is sent twice.
import { randomUUID } from 'node:crypto';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Channel, RequestOrigin } from '../jsonrpc/channel.js';
import type { JsonRpcMessage, JsonRpcRequest, RequestId, Result } from '../jsonrpc/message.js';
import { WIRE } from '../errors/errors.js';
import { messageOf } from '../jsonrpc/outgoing.js';
import type { Logger } from '../log.js';
import { routedMessage, type AssertionSigner } from './assertion.js';
import { listChanges, listenAcknowledged, RemoteListens } from './listen-streams.js';
import { mergedTaskList } from './mesh-task-list.js';
import { nodeRefusal, type NodeRefusals, type ProbeResult } from './node-refusals.js';
import { markAnswer, markTaskIds, unmarked } from './node-marks.js';
import { encodeEnvelope } from './envelope.js';
import { StaleResends } from './stale-resends.js';
import type { Subjects } from './subjects.js';
import { leastLoaded } from './least-loaded.js';

/** What switchboard's own requests (catalog, discover) are asserted as: `host:switchboard@<node>` there. */
const SELF = { kind: 'host', id: 'switchboard' } as const;

export interface MeshChannelOptions {
  nc: NatsConnection;
  subjects: Subjects;
  /** This node. */
  self: string;
  /** The server's name on the nodes that serve it. */
  server: string;
  /** The live nodes serving it now. */
  nodes(): string[];
  signer: AssertionSigner | undefined;
  /** Nodes refusing this node: new calls go to the others (node-refusals.ts). */
  refusals?: Pick<NodeRefusals, 'usable' | 'refused'>;
  log: Logger;
  /** Told when the channel closes. */
  closed?: () => void;
}

export class MeshChannel implements Channel {
  onmessage?: ((message: unknown) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  closeReason: string | undefined;
  private sub: Subscription | undefined;
  private readonly inbox: string;
  /** Requests sent and not answered, by id: the node that has each. */
  private readonly pending = new Map<RequestId, string>();
  /** Requests sent MACed, sent again signed if their target refuses their session as stale. */
  private readonly resendable = new StaleResends();
  /** Who wants to know where each request was served (see RequestOrigin.served). */
  private readonly origins = new Map<RequestId, RequestOrigin>();
  /** subscriptions/listen requests, answered here (list changes come from announcements). */
  private readonly listening = new Set<RequestId>();
  /** Listen streams holding resource subscriptions, open on a serving node (listen-streams.ts). */
  private readonly streams: RemoteListens;
  private turn = 0;
  /** Requests the channel makes itself (a tasks/list page of one node), by id: who takes the answer. */
  private readonly gathering = new Map<RequestId, (answer: JsonRpcMessage) => void>();

  constructor(private readonly o: MeshChannelOptions) {
    this.inbox = o.subjects.inbox(o.self, randomUUID());
    this.streams = new RemoteListens({
      server: o.server,
      nodes: () => this.o.nodes(),
      publish: async (node, message) => void this.publish(node, message, undefined),
      fail: (id, message) => this.fail(id, message),
    });
  }

  async start(): Promise<void> {
    // Each node answers on a subject of its own under the inbox (`<inbox>.<node>`).
    this.sub = this.o.nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => {
        if (err) return;
        try {
          const m = msg.json<JsonRpcMessage>();
          const from = this.fromNode(msg.subject, m);
          if (from !== undefined) markTaskIds(m, from);
          if (!this.streams.received(m, from)) return;
          if ('id' in m && !('method' in m)) {
            const subjectNode = msg.subject.slice(this.inbox.length + 1);
            if (this.resentAfterStale(m, subjectNode)) return;
            this.noteRefusal(m, subjectNode);
            this.answered(m);
            const gather = this.gathering.get(m.id as RequestId);
            if (gather) return gather(m);
          }
          this.onmessage?.(m);
        } catch {
          this.o.log.warn({ server: this.o.server }, 'mesh answer that is not JSON dropped');
        }
      },
    });
  }

  /** `origin` is the call a forwarded request is made for (the backend layer hands it down): what the assertion names. */
  async send(message: JsonRpcMessage, options?: { origin?: RequestOrigin | undefined }): Promise<void> {
    if ('method' in message && message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (id !== undefined && this.listening.delete(id)) return;
      if (id !== undefined && (await this.streams.cancelled(id, message))) return;
      const node = id === undefined ? undefined : this.pending.get(id);
      if (node === undefined) return;
      this.publish(node, message, undefined);
      // A cancelled request gets no answer (MCP's rule): nothing more is waited for.
      this.pending.delete(id!);
      this.origins.delete(id!);
      this.resendable.forget(id!);
      return;
    }
    if (!('method' in message) || !('id' in message)) return; // answers: the mesh asks nothing (modern era)
    const id = message.id as RequestId;
    if (message.method === 'tasks/list')
      return void this.listTasks(message, options?.origin).catch((err: unknown) =>
        this.fail(id, `tasks/list across the mesh failed: ${messageOf(err)}`),
      );
    if (message.method === 'subscriptions/listen') {
      // Resource updates come from a node serving the server; list changes from announcements.
      if (await this.streams.open(message, listChanges(message.params))) return;
      return this.listen(id, message.params);
    }
    // A retry after input_required goes to the node that asked (the call waiting for the answers,
    // or the state behind the question, is there); a task's requests go to the node holding it.
    const params = message.params;
    const asked = unmarked(params?.requestState);
    const task = message.method.startsWith('tasks/') ? unmarked(params?.taskId) : undefined;
    if (asked) message = { ...message, params: { ...params, requestState: asked.id } };
    if (task) message = { ...message, params: { ...message.params, taskId: task.id } };
    const bound = asked?.node ?? task?.node;
    const node = bound === undefined ? this.pick() : this.o.nodes().includes(bound) ? bound : undefined;
    if (!node)
      return this.fail(
        id,
        bound === undefined
          ? `no node of the mesh serving ${this.o.server} is reachable`
          : `mesh node ${bound}, which holds this ${asked ? 'paused call' : 'task'}, is unreachable`,
      );
    this.pending.set(id, node);
    if (options?.origin?.served) {
      this.origins.set(id, options.origin);
      options.origin.served(node, undefined);
    }
    try {
      const jws = this.publish(node, message, options?.origin);
      if (jws !== undefined) this.resendable.sent(id, { message, origin: options?.origin, jws });
    } catch (err) {
      this.pending.delete(id);
      this.resendable.forget(id);
      this.origins.delete(id);
      this.fail(id, `mesh node ${node} could not be sent the call: ${(err as Error).message}`);
    }
  }

  /** tasks/list over every live node serving the server, merged (mesh-task-list.ts). */
  private async listTasks(message: JsonRpcRequest, origin: RequestOrigin | undefined): Promise<void> {
    const nodes = this.o.nodes();
    if (nodes.length === 0)
      return this.fail(message.id, `no node of the mesh serving ${this.o.server} is reachable`);
    const tasks = await mergedTaskList(nodes, message, {
      ask: (node, page) => this.request(node, page, origin),
      left: (node, why) =>
        this.o.log.warn({ server: this.o.server, node, err: why }, 'tasks/list failed on a node; left out'),
    });
    this.onmessage?.({ jsonrpc: '2.0', id: message.id, result: { tasks } });
  }

  /** A request of the channel's own to one node; resolves with its answer (an error if the node is lost). */
  private request(
    node: string,
    message: JsonRpcRequest,
    origin: RequestOrigin | undefined,
  ): Promise<JsonRpcMessage> {
    return new Promise((resolve) => {
      const id = message.id as RequestId;
      this.gathering.set(id, (answer) => {
        this.gathering.delete(id);
        resolve(answer);
      });
      this.pending.set(id, node);
      try {
        this.publish(node, message, origin);
      } catch (err) {
        this.pending.delete(id);
        this.answerError(id, `mesh node ${node} could not be sent the call: ${(err as Error).message}`);
      }
    });
  }

  /** This channel's requests to `node` not answered yet. */
  inFlight(node: string): number {
    let n = 0;
    for (const held of this.pending.values()) if (held === node) n++;
    return n;
  }

  /** A signed ping to `node`, to learn whether it takes this node's calls (node-refusals.ts). */
  async probe(node: string, withinMs: number): Promise<ProbeResult> {
    const id = `probe-${randomUUID()}`;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), withinMs);
      // A probe alone must not keep a stopping process alive.
      timer.unref();
    });
    const answer = await Promise.race([
      this.request(node, { jsonrpc: '2.0', id, method: 'ping' }, undefined),
      late,
    ]);
    clearTimeout(timer);
    if (answer === undefined) {
      this.gathering.delete(id);
      this.pending.delete(id);
      return { accepted: false, why: `no answer to a probe within ${withinMs} ms` };
    }
    const why = nodeRefusal(answer);
    return why === undefined ? { accepted: true } : { accepted: false, why };
  }

  /**
   * Nodes went down: what they held fails now, naming them and `why` (its outcome there is
   * unknown).
   */
  nodesDown(alive: (node: string) => boolean, why: string): void {
    this.streams.nodesDown(alive, why);
    for (const [id, node] of this.pending) {
      if (alive(node)) continue;
      this.pending.delete(id);
      this.resendable.forget(id);
      this.origins.delete(id);
      // At once, not queued: the server may be taken out of the gateway right after this.
      this.answerError(id, `mesh node ${node} is unreachable (${why}); the call's outcome there is unknown`);
    }
  }

  /** The server's lists on the mesh changed: the backend connection refreshes them. */
  listChanged(): void {
    for (const method of ['tools', 'prompts', 'resources'])
      this.onmessage?.({ jsonrpc: '2.0', method: `notifications/${method}/list_changed` });
  }

  async close(): Promise<void> {
    this.sub?.unsubscribe();
    for (const id of [...this.pending.keys()]) this.answerError(id, 'the mesh server was removed');
    this.pending.clear();
    this.resendable.clear();
    this.origins.clear();
    this.listening.clear();
    this.streams.close();
    for (const id of [...this.gathering.keys()]) this.answerError(id, 'the mesh server was removed');
    this.o.closed?.();
    this.onclose?.();
  }

  /** A stale refusal of a request sent MACed (stale-resends.ts): sent again signed; true if so. */
  private resentAfterStale(m: JsonRpcMessage, subjectNode: string): boolean {
    const id = (m as { id: RequestId }).id;
    const node = this.pending.get(id);
    const sent = this.resendable.take(m, node, subjectNode);
    if (!sent || node === undefined) return false;
    // Until the target acknowledges a session again, everything to it goes signed (a cancel too).
    this.o.signer?.sessionRefused(node);
    this.o.log.info(
      { server: this.o.server, node },
      'mesh node holds no session with this node yet; sent again signed',
    );
    try {
      this.publish(node, sent.message, sent.origin, true);
    } catch (err) {
      this.pending.delete(id);
      this.answerError(id, `mesh node ${node} could not be sent the call: ${(err as Error).message}`);
    }
    return true;
  }

  /** An answer: its request is no longer pending; the call id it ran as there goes to its origin. */
  private answered(m: JsonRpcMessage): void {
    const id = (m as { id: RequestId }).id;
    const node = this.pending.get(id);
    this.pending.delete(id);
    const origin = this.origins.get(id);
    this.origins.delete(id);
    const callId = markAnswer((m as { result?: Result }).result, node);
    if (node !== undefined && callId !== undefined) origin?.served?.(node, callId);
  }

  /**
   * A refusal of this node by the node a request went to, on that node's own subject: the node
   * leaves rotation. Not authenticated (answers are not signed): a forged one keeps a node out
   * only until its next probe.
   */
  private noteRefusal(m: JsonRpcMessage, subjectNode: string): void {
    const why = nodeRefusal(m);
    if (why !== undefined && this.pending.get((m as { id: RequestId }).id) === subjectNode)
      this.o.refusals?.refused(subjectNode, why);
  }

  /** The live node taking our calls with the fewest of them in flight; ties go round-robin. */
  private pick(): string | undefined {
    const live = this.o.nodes();
    return leastLoaded(this.o.refusals?.usable(live) ?? live, this.pending.values(), this.turn++);
  }

  /** Signs and publishes one message to a node; returns the assertion; throws if it cannot be sent. */
  private publish(
    node: string,
    message: JsonRpcMessage,
    origin: RequestOrigin | undefined,
    ed25519 = false,
  ): string | undefined {
    const msg = JSON.stringify(message);
    const caller = (origin?.caller ?? SELF) as Parameters<AssertionSigner['sign']>[0];
    const routed = routedMessage(this.o.server, this.inbox, msg);
    const jws = this.o.signer?.sign(caller, origin?.callId ?? 'mesh', node, routed, ed25519);
    const envelope = { from: this.o.self, server: this.o.server, inbox: this.inbox, jws, msg };
    this.o.nc.publish(this.o.subjects.rpc(node), encodeEnvelope(envelope));
    return jws;
  }

  /** The node a message came from: the one an answer's request went to, else the subject's. */
  private fromNode(subject: string, m: JsonRpcMessage): string | undefined {
    if ('id' in m && !('method' in m)) {
      const node = this.pending.get(m.id as RequestId);
      if (node !== undefined) return node;
    }
    const node = subject.slice(this.inbox.length + 1);
    return node.length > 0 ? node : undefined;
  }

  /** Acknowledges a listen stream as asked: announcements stand in for the nodes' own. */
  private listen(id: RequestId, params: unknown): void {
    this.listening.add(id);
    queueMicrotask(() => this.onmessage?.(listenAcknowledged(id, params)));
  }

  /** Fails a request from inside send(): answered once send has returned, as a peer expects. */
  private fail(id: RequestId, message: string): void {
    queueMicrotask(() => this.answerError(id, message));
  }

  private answerError(id: RequestId, message: string): void {
    const answer = { jsonrpc: '2.0' as const, id, error: { code: WIRE.BACKEND_UNAVAILABLE, message } };
    const gather = this.gathering.get(id);
    if (gather) return gather(answer);
    this.onmessage?.(answer);
  }
}
