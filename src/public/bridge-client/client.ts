// The typed bridge client: many requests in flight on one connection, cancellation, progress, the
// call chain carried on, and switchboard's requests back to this backend served.
import type {
  CallToolResult,
  GetPromptResult,
  ListToolsResult,
  ProgressNotificationParams,
  ReadResourceResult,
} from '@modelcontextprotocol/client';
import { WIRE, WireError } from '../../errors/errors.js';
import { RpcEngine, type Inbound } from '../../jsonrpc/engine.js';
import type {
  JsonRpcMessage,
  JsonRpcRequest,
  Params,
  RequestId,
  Result,
  WireErrorBody,
} from '../../jsonrpc/message.js';
import type { BridgeSession } from './authenticate.js';
import { chainOf, traceMeta } from './chain.js';
import { BridgeConnection, type BridgeConnectOptions } from './connection.js';
import { AUTH_ID, BRIDGE_ERROR_CODES, CHAIN_META_KEY } from './constants.js';
import { BridgeError, cancelledError } from './errors.js';
import { textOf } from '../../encoding/text-of.js';

export interface BridgeRequestOptions {
  /** Aborting sends notifications/cancelled and rejects with code 'cancelled'. */
  signal?: AbortSignal;
  /** Asks for progress (`_meta.progressToken`) and receives each notifications/progress. */
  onProgress?: (progress: ProgressNotificationParams) => void;
  /** The `_meta` (or params, or request) of the MCP request being served: its call chain and trace context (`traceparent`, `tracestate`) are carried on. */
  parent?: unknown;
}

/** A request switchboard sends to this client (sampling, elicitation, roots) when a callee asks its caller. */
export interface BridgeServerRequest {
  id: RequestId;
  method: string;
  params: Params | undefined;
  /** Aborted when switchboard cancels the request. */
  signal: AbortSignal;
}

/** A typed bridge client: many requests in flight, cancellation, progress, chain propagation. */
export class BridgeClient {
  /** Answers server→client requests; throw a BridgeError with a numeric code to answer an error. */
  onRequest: (request: BridgeServerRequest) => Result | Promise<Result> = (request) => {
    throw new BridgeError(BRIDGE_ERROR_CODES.METHOD_NOT_FOUND, `Method not found: ${request.method}`);
  };
  /** Notifications other than progress and cancellation (e.g. list_changed, logging). */
  onNotification: ((method: string, params: Params | undefined) => void) | undefined;
  /** Non-fatal trouble: unparseable or oversized lines, errors answered to id null. */
  onError: ((error: Error) => void) | undefined;

  private readonly engine: RpcEngine;
  private readonly inbound: Inbound = {
    request: (request) => void this.serve(request),
    notification: ({ method, params }) => {
      // Progress for a request no longer waiting is nobody's news.
      if (method !== 'notifications/progress') this.onNotification?.(method, params);
    },
    invalid: (_id, reason) =>
      this.onError?.(new BridgeError('protocol', `the bridge sent an invalid message: ${reason}`)),
    orphanError: ({ code, message, data }) => this.onError?.(new BridgeError(code, message, data)),
    failed: (err) =>
      this.onError?.(
        new BridgeError(
          'protocol',
          `a message from the bridge could not be handled: ${err instanceof Error ? err.message : textOf(err)}`,
        ),
      ),
  };

  constructor(private readonly connection: BridgeConnection) {
    this.engine = new RpcEngine({
      firstId: AUTH_ID + 1,
      send: (message) => connection.send(message),
      // Handlers see the reason switchboard gave, as it gave it.
      cancelledBy: (params) => params?.reason,
      errors: {
        cancelled: cancelledError,
        // The connection's own error says why: closed, or too large for the bridge.
        undelivered: (_method, cause) => (cause instanceof Error ? cause : connection.closedError()),
        answered: ({ code, message, data }) => new BridgeError(code, message, data),
      },
    });
    connection.listen({
      message: (value) => this.engine.receive(value, this.inbound),
      error: (error) => this.onError?.(error),
      close: () => this.engine.close(connection.closedError()),
    });
  }

  /** Resolves when the connection has closed, from either side. */
  get closed(): Promise<void> {
    return this.connection.closed;
  }

  get identity(): string {
    return this.connection.session.identity;
  }

  get session(): BridgeSession {
    return this.connection.session;
  }

  request<T extends object = Result>(
    method: string,
    params?: Params,
    options: BridgeRequestOptions = {},
  ): Promise<T> {
    const { signal, onProgress, parent } = options;
    const chain = chainOf(parent);
    // A chain the caller put in _meta itself wins: it knows better than we do. So does its own
    // trace context: otherwise the request continues the trace of the one it is made for.
    const own = params?._meta ?? {};
    const meta: Record<string, unknown> = {};
    if (chain !== undefined && !(CHAIN_META_KEY in own)) meta[CHAIN_META_KEY] = chain;
    if (!('traceparent' in own)) Object.assign(meta, traceMeta(parent));
    return this.engine.outgoing.request(method, params, {
      signal,
      meta: Object.keys(meta).length ? meta : undefined,
      onProgress: onProgress && ((p) => onProgress(p as unknown as ProgressNotificationParams)),
    }) as Promise<T>;
  }

  notify(method: string, params?: Params): Promise<void> {
    return this.connection.send({ jsonrpc: '2.0', method, ...(params !== undefined && { params }) });
  }

  ping(options?: BridgeRequestOptions): Promise<Result> {
    return this.request('ping', undefined, options);
  }

  /** A tool as hosts see it in the catalog (e.g. `memory_create_entities`); a tool error is a result, not a throw. */
  callTool(
    name: string,
    args: Record<string, unknown> = {},
    options?: BridgeRequestOptions,
  ): Promise<CallToolResult> {
    return this.request('tools/call', { name, arguments: args }, options);
  }

  /** Every tool this caller may use, all pages (or one page when `cursor` is given). */
  async listTools(options: BridgeRequestOptions & { cursor?: string } = {}): Promise<ListToolsResult> {
    const { cursor, ...rest } = options;
    if (cursor !== undefined) return this.request('tools/list', { cursor }, rest);
    const tools: ListToolsResult['tools'] = [];
    let page: ListToolsResult | undefined;
    do {
      page = await this.request<ListToolsResult>(
        'tools/list',
        page?.nextCursor ? { cursor: page.nextCursor } : undefined,
        rest,
      );
      tools.push(...page.tools);
    } while (page.nextCursor);
    const { nextCursor: _last, ...rest2 } = page;
    return { ...rest2, tools };
  }

  readResource(uri: string, options?: BridgeRequestOptions): Promise<ReadResourceResult> {
    return this.request('resources/read', { uri }, options);
  }

  getPrompt(
    name: string,
    args?: Record<string, string>,
    options?: BridgeRequestOptions,
  ): Promise<GetPromptResult> {
    return this.request('prompts/get', { name, ...(args && { arguments: args }) }, options);
  }

  /** A handler method served inside switchboard, e.g. `call('vault.sign', { key, data })`. */
  call<T extends object = Result>(
    handlerMethod: string,
    params?: Params,
    options?: BridgeRequestOptions,
  ): Promise<T> {
    return this.request<T>(handlerMethod, params, options);
  }

  /** Closes the connection; requests still in flight reject with code 'closed'. */
  close(): Promise<void> {
    return this.connection.close();
  }

  private async serve(request: JsonRpcRequest): Promise<void> {
    let reply: JsonRpcMessage;
    try {
      const { id, method, params } = request;
      const result = await this.engine.incoming.run(id, (abort) =>
        this.onRequest({ id, method, params, signal: abort.signal }),
      );
      // A cancelled request gets no answer (MCP's rule for cancellation).
      if (result === undefined) return;
      reply = { jsonrpc: '2.0', id, result };
    } catch (err) {
      reply = { jsonrpc: '2.0', id: request.id, error: errorBody(err) };
    }
    await this.connection.send(reply).catch((err: Error) => this.onError?.(err));
  }
}

/** The answer to a server request that failed: a numeric BridgeError as thrown, else an internal error. */
function errorBody(err: unknown): WireErrorBody {
  if (err instanceof BridgeError && typeof err.code === 'number')
    return { code: err.code, message: err.message, ...(err.data !== undefined && { data: err.data }) };
  // The engine's own refusals (a request id already in use).
  if (err instanceof WireError) return err.toJSON();
  return { code: WIRE.INTERNAL_ERROR, message: err instanceof Error ? err.message : 'Internal error' };
}

/** Connects to the bridge named by the environment (or options) and authenticates. */
export async function connectBridge(options?: BridgeConnectOptions): Promise<BridgeClient> {
  return new BridgeClient(await BridgeConnection.open(options));
}

/**
 * One bridge connection shared by a whole backend, opened on first use: returns a getter that
 * connects the first time, and again after a failed attempt or once the connection has closed
 * (switchboard restarted, say), so tool handlers can simply `await bridge()` each time.
 */
export function sharedBridge(options?: BridgeConnectOptions): () => Promise<BridgeClient> {
  let current: Promise<BridgeClient> | undefined;
  return () => {
    current ??= connectBridge(options).then(
      (client) => {
        void client.closed.then(() => (current = undefined));
        return client;
      },
      (err: unknown) => {
        current = undefined;
        throw err;
      },
    );
    return current;
  };
}
