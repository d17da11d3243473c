// Listen streams holding resource subscriptions on a mesh server: the entry node's
// subscriptions/listen goes to one node serving the server (which subscribes there, through its
// own pipeline), the node's acknowledgement comes back with the list changes the entry node
// answers itself, and a stream whose node is lost moves to another node serving the server, or
// ends with an error naming the node.
import type { JsonRpcMessage, JsonRpcRequest, RequestId } from '../jsonrpc/message.js';
import { META } from '../protocol/versions.js';

/** The list changes a listen filter asks for: the entry node tells them from announcements. */
export interface ListFlags {
  toolsListChanged: boolean;
  promptsListChanged: boolean;
  resourcesListChanged: boolean;
}

export function listChanges(params: unknown): ListFlags {
  const filter = ((params ?? {}) as { notifications?: Record<string, unknown> }).notifications ?? {};
  return {
    toolsListChanged: filter.toolsListChanged === true,
    promptsListChanged: filter.promptsListChanged === true,
    resourcesListChanged: filter.resourcesListChanged === true,
  };
}

/** The acknowledgement of a listen stream the entry node answers itself, from announcements. */
export function listenAcknowledged(id: RequestId, params: unknown): JsonRpcMessage {
  return {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { notifications: listChanges(params), _meta: { [META.subscriptionId]: id } },
  };
}

interface Stream {
  /** The node holding it now. */
  node: string;
  /** The request as the node is sent it: the resource URIs only. */
  request: JsonRpcRequest;
  flags: ListFlags;
}

export interface RemoteListensOptions {
  server: string;
  /** The live nodes serving the server now. */
  nodes(): string[];
  publish(node: string, message: JsonRpcMessage): Promise<void>;
  /** Answers a listen request with an error (queued: it may be inside the channel's send). */
  fail(id: RequestId, message: string): void;
}

export class RemoteListens {
  private readonly streams = new Map<RequestId, Stream>();
  private turn = 0;

  constructor(private readonly o: RemoteListensOptions) {}

  /** Opens a listen stream on a node when it names resource URIs; false when it names none. */
  async open(request: JsonRpcRequest, flags: ListFlags): Promise<boolean> {
    const notifications = request.params?.notifications as { resourceSubscriptions?: unknown } | undefined;
    const uris = notifications?.resourceSubscriptions;
    if (!Array.isArray(uris) || uris.length === 0) return false;
    const forwarded = {
      ...request,
      params: { ...request.params, notifications: { resourceSubscriptions: uris } },
    };
    const stream: Stream = { node: '', request: forwarded, flags };
    this.streams.set(request.id, stream);
    await this.place(request.id, stream, undefined);
    return true;
  }

  /**
   * A message from a node: false when it is dropped (it comes from a node that held a stream
   * before it moved). An acknowledgement gets the list changes added; an answer ends the stream.
   */
  received(m: JsonRpcMessage, from: string | undefined): boolean {
    if ('id' in m && !('method' in m)) {
      const stream = this.streams.get(m.id as RequestId);
      if (!stream) return true;
      if (stream.node !== from) return false;
      this.streams.delete(m.id as RequestId);
      return true;
    }
    if (!('method' in m)) return true;
    const params = m.params;
    const id = params?._meta?.[META.subscriptionId] as RequestId | undefined;
    const stream = id === undefined ? undefined : this.streams.get(id);
    if (!stream || !params) return true;
    if (stream.node !== from) return false;
    if (m.method === 'notifications/subscriptions/acknowledged') {
      const taken = (params.notifications as { resourceSubscriptions?: unknown } | undefined)
        ?.resourceSubscriptions;
      params.notifications = {
        ...stream.flags,
        resourceSubscriptions: Array.isArray(taken) ? taken : [],
      };
    }
    return true;
  }

  /** A listen request was cancelled (replaced or released): its node is told. */
  async cancelled(id: RequestId, message: JsonRpcMessage): Promise<boolean> {
    const stream = this.streams.get(id);
    if (!stream) return false;
    this.streams.delete(id);
    await this.o.publish(stream.node, message).catch(() => {});
    return true;
  }

  /** Streams on lost nodes move to another node serving the server, or end naming the node. */
  nodesDown(alive: (node: string) => boolean, why: string): void {
    for (const [id, stream] of this.streams)
      if (!alive(stream.node)) void this.place(id, stream, { node: stream.node, why });
  }

  /** The server left this node: each stream's node is told to end it. */
  close(): void {
    for (const [id, stream] of this.streams) {
      const cancel = {
        jsonrpc: '2.0' as const,
        method: 'notifications/cancelled',
        params: { requestId: id },
      };
      void this.o.publish(stream.node, cancel).catch(() => {});
    }
    this.streams.clear();
  }

  private async place(
    id: RequestId,
    stream: Stream,
    lost: { node: string; why: string } | undefined,
  ): Promise<void> {
    const nodes = this.o.nodes();
    const node = nodes.length ? nodes[this.turn++ % nodes.length] : undefined;
    if (node === undefined) {
      this.streams.delete(id);
      return this.o.fail(
        id,
        lost === undefined
          ? `no node of the mesh serving ${this.o.server} is reachable`
          : `mesh node ${lost.node}, which held the subscriptions to ${this.o.server}, is unreachable (${lost.why})`,
      );
    }
    stream.node = node;
    try {
      await this.o.publish(node, stream.request);
    } catch (err) {
      this.streams.delete(id);
      this.o.fail(id, `mesh node ${node} could not be sent the subscriptions: ${(err as Error).message}`);
    }
  }
}
