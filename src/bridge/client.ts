// The bridge client (`mcp-switchboard/bridge`): a backend's way back into switchboard, typed or as an SDK Transport.
import { createConnection, type Socket } from 'node:net';
import type {
  CallToolResult,
  GetPromptResult,
  JSONRPCMessage,
  ListToolsResult,
  ProgressNotificationParams,
  ReadResourceResult,
  Transport,
} from '@modelcontextprotocol/client';
import { LineSplitter } from '../jsonrpc/ndjson.js';
import {
  classify,
  isFailure,
  withMeta,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type Meta,
  type Params,
  type RequestId,
  type Result,
} from '../jsonrpc/message.js';

export const BRIDGE_PROTOCOL = 'switchboard-bridge/1';
export const BRIDGE_PATH_ENV = 'SWITCHBOARD_BRIDGE';
export const BRIDGE_TOKEN_ENV = 'SWITCHBOARD_BRIDGE_TOKEN';
/** `_meta` key carrying the call chain switchboard uses for its loop guard and cancellation cascade. */
export const CHAIN_META_KEY = 'io.switchboard/chain';
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
export const BRIDGE_ERROR_CODES = {
  AUTHENTICATION_FAILED: -32030,
  CALL_CYCLE: -32031,
  CHAIN_TOO_DEEP: -32032,
  BACKEND_UNAVAILABLE: -32001,
  METHOD_NOT_FOUND: -32601,
} as const;

/** Id of the authentication request; ordinary requests start after it so transcripts read plainly. */
const AUTH_ID = 1;

/** Failures that happen on this side, before or instead of a server answer. */
export type BridgeLocalCode =
  'not_configured' | 'unavailable' | 'closed' | 'cancelled' | 'message_too_large' | 'protocol';

/** A server's JSON-RPC error (numeric `code`, `data` as sent) or a local failure (string `code`). */
export class BridgeError extends Error {
  override name = 'BridgeError';
  constructor(
    readonly code: number | BridgeLocalCode,
    message: string,
    readonly data?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface BridgeConnectOptions {
  /** Socket path (default: `env.SWITCHBOARD_BRIDGE`). */
  path?: string;
  /** Token (default: `env.SWITCHBOARD_BRIDGE_TOKEN`). */
  token?: string;
  env?: NodeJS.ProcessEnv;
  /** Largest incoming line accepted (default: the limit the server announces). */
  maxMessageBytes?: number;
}

/** What authentication established. */
export interface BridgeSession {
  identity: string;
  protocol: string;
  /** The server's limit: larger outgoing messages are refused here rather than dropped there. */
  maxMessageBytes: number;
}

interface ConnectionHandlers {
  message(value: unknown): void;
  error(error: Error): void;
  close(): void;
}

/**
 * One authenticated bridge socket: the only code that frames, limits and writes, shared by the
 * client and the transport. Reading stays paused after authentication until `listen()`, so no
 * message arrives before its handler exists.
 */
export class BridgeConnection {
  private handlers: ConnectionHandlers | undefined;
  private draining: Promise<void> | undefined;
  private isClosed = false;
  private lastError: Error | undefined;
  private readonly closedPromise: Promise<void>;

  private constructor(
    private readonly socket: Socket,
    readonly session: BridgeSession,
    private readonly rest: Buffer,
    private readonly receiveLimit: number,
  ) {
    this.closedPromise = new Promise((resolve) => {
      if (socket.destroyed) {
        this.isClosed = true;
        return resolve();
      }
      socket.once('close', () => {
        this.isClosed = true;
        resolve();
        this.handlers?.close();
      });
    });
    socket.on('error', (err) => {
      this.lastError = err;
      this.handlers?.error(err);
    });
  }

  static async open(options: BridgeConnectOptions = {}): Promise<BridgeConnection> {
    const env = options.env ?? process.env;
    const path = options.path ?? env[BRIDGE_PATH_ENV];
    const token = options.token ?? env[BRIDGE_TOKEN_ENV];
    if (!path) {
      throw new BridgeError(
        'not_configured',
        `${BRIDGE_PATH_ENV} is not set: this process was not started by a switchboard with a bridge (or pass { path })`,
      );
    }
    if (!token) {
      throw new BridgeError(
        'not_configured',
        `${BRIDGE_TOKEN_ENV} is not set: the bridge needs the token switchboard gave this backend (or pass { token })`,
      );
    }
    const firstLimit = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    const socket = await dial(path);
    try {
      const { session, rest } = await authenticate(socket, token, firstLimit);
      return new BridgeConnection(socket, session, rest, options.maxMessageBytes ?? session.maxMessageBytes);
    } catch (err) {
      socket.on('error', () => {}); // a late error of a socket we are abandoning is not news
      socket.destroy();
      throw err;
    }
  }

  get closed(): Promise<void> {
    return this.closedPromise;
  }

  listen(handlers: ConnectionHandlers): void {
    this.handlers = handlers;
    const splitter = new LineSplitter(this.receiveLimit, {
      line: (text) => {
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          handlers.error(new BridgeError('protocol', 'the bridge sent a line that is not JSON'));
          return;
        }
        handlers.message(value);
      },
      oversized: (bytes) =>
        handlers.error(
          new BridgeError(
            'message_too_large',
            `dropped an incoming message of at least ${bytes} bytes (limit ${this.receiveLimit})`,
          ),
        ),
    });
    if (this.rest.length) splitter.push(this.rest);
    this.socket.on('data', (chunk: Buffer) => splitter.push(chunk));
    this.socket.resume();
    if (this.isClosed) handlers.close();
  }

  /** Resolves once the socket has taken the line; waits for 'drain' while the kernel buffer is full. */
  async send(message: JsonRpcMessage | JSONRPCMessage): Promise<void> {
    const line = JSON.stringify(message);
    const bytes = Buffer.byteLength(line);
    if (bytes > this.session.maxMessageBytes) {
      // The server would drop it and answer with id null, which no caller could match: fail here.
      throw new BridgeError(
        'message_too_large',
        `message of ${bytes} bytes exceeds the bridge limit of ${this.session.maxMessageBytes}`,
      );
    }
    while (this.draining) await this.draining;
    if (this.isClosed || this.socket.destroyed) throw this.closedError();
    if (!this.socket.write(line + '\n')) await this.waitForDrain();
  }

  /** Flushes what was written, then closes without waiting for the peer. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    if (this.socket.writableEnded) this.socket.destroy();
    else this.socket.end(() => this.socket.destroy());
    await this.closedPromise;
  }

  /** The error requests still in flight get when the connection is gone (with the socket's error, if any). */
  closedError(): BridgeError {
    return new BridgeError('closed', 'the bridge connection is closed', undefined, { cause: this.lastError });
  }

  private waitForDrain(): Promise<void> {
    this.draining ??= new Promise<void>((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        this.draining = undefined;
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
    return this.draining;
  }
}

function dial(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ path });
    const onError = (err: NodeJS.ErrnoException) =>
      reject(
        new BridgeError(
          'unavailable',
          `cannot reach the switchboard bridge at ${path}: ${err.code ?? err.message}`,
          undefined,
          {
            cause: err,
          },
        ),
      );
    socket.once('error', onError);
    socket.once('connect', () => {
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

/** Sends bridge/authenticate and reads lines up to its answer; what follows it is handed back unread. */
function authenticate(
  socket: Socket,
  token: string,
  limit: number,
): Promise<{ session: BridgeSession; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    let buffered: Buffer = Buffer.alloc(0);
    const stop = () => {
      socket.pause();
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('error', onError);
    };
    const fail = (err: BridgeError) => {
      stop();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
      for (let nl = buffered.indexOf(10); nl !== -1; nl = buffered.indexOf(10)) {
        const text = buffered.subarray(0, nl).toString('utf8');
        buffered = buffered.subarray(nl + 1);
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          return fail(
            new BridgeError('protocol', 'the bridge answered authentication with a line that is not JSON'),
          );
        }
        const c = classify(value);
        // Anything before the answer is not ours to interpret yet; the answer carries our id (or null if unmatched).
        if (c.kind !== 'response' || (c.message.id !== AUTH_ID && c.message.id !== null)) continue;
        stop();
        if (isFailure(c.message)) {
          const { code, message, data } = c.message.error;
          return reject(new BridgeError(code, message, data));
        }
        try {
          return resolve({ session: sessionOf(c.message.result), rest: buffered });
        } catch (err) {
          return reject(err);
        }
      }
      if (buffered.length > limit)
        fail(new BridgeError('protocol', 'the authentication answer exceeds the size limit'));
    };
    const onClose = () =>
      fail(new BridgeError('closed', 'the bridge closed the connection before answering authentication'));
    const onError = (err: Error) =>
      fail(
        new BridgeError(
          'unavailable',
          `bridge socket failed during authentication: ${err.message}`,
          undefined,
          { cause: err },
        ),
      );
    socket.on('data', onData);
    socket.on('close', onClose);
    socket.on('error', onError);
    const auth = { jsonrpc: '2.0', id: AUTH_ID, method: 'bridge/authenticate', params: { token } };
    socket.write(JSON.stringify(auth) + '\n');
  });
}

function sessionOf(result: Result): BridgeSession {
  const { identity, protocol, maxMessageBytes } = result;
  if (typeof identity !== 'string' || !identity) {
    throw new BridgeError('protocol', 'the bridge authenticated without naming an identity', result);
  }
  if (typeof protocol === 'string' && protocol !== BRIDGE_PROTOCOL) {
    throw new BridgeError(
      'protocol',
      `the bridge speaks ${protocol}, this client ${BRIDGE_PROTOCOL}`,
      result,
    );
  }
  return {
    identity,
    protocol: typeof protocol === 'string' ? protocol : BRIDGE_PROTOCOL,
    maxMessageBytes:
      typeof maxMessageBytes === 'number' && Number.isSafeInteger(maxMessageBytes) && maxMessageBytes > 0
        ? maxMessageBytes
        : DEFAULT_MAX_MESSAGE_BYTES,
  };
}

/**
 * The call chain of the request being served, from its `_meta` (`ctx.mcpReq._meta` in an SDK
 * server), its params (anything with `_meta`), or the whole JSON-RPC request.
 */
export function chainOf(parent: unknown): unknown {
  if (!isRecord(parent)) return undefined;
  if (CHAIN_META_KEY in parent) return parent[CHAIN_META_KEY];
  if (isRecord(parent._meta)) return chainOf(parent._meta);
  if (isRecord(parent.params)) return chainOf(parent.params);
  return undefined;
}

/** `_meta` entries to add to a request made while serving `parent` (empty when it carries no chain). */
export function chainMeta(parent: unknown): Meta {
  const chain = chainOf(parent);
  return chain === undefined ? {} : { [CHAIN_META_KEY]: chain };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export interface BridgeRequestOptions {
  /** Aborting sends notifications/cancelled and rejects with code 'cancelled'. */
  signal?: AbortSignal;
  /** Asks for progress (`_meta.progressToken`) and receives each notifications/progress. */
  onProgress?: (progress: ProgressNotificationParams) => void;
  /** The `_meta` (or params, or request) of the MCP request being served: its call chain is carried on. */
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

interface Pending {
  resolve(result: Result): void;
  reject(error: Error): void;
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

  private nextId = AUTH_ID + 1;
  private readonly pending = new Map<RequestId, Pending>();
  private readonly progress = new Map<RequestId, (progress: ProgressNotificationParams) => void>();
  private readonly incoming = new Map<RequestId, AbortController>();

  constructor(private readonly connection: BridgeConnection) {
    connection.listen({
      message: (value) => this.receive(value),
      error: (error) => this.onError?.(error),
      close: () => this.failAll(),
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
    if (signal?.aborted) return Promise.reject(cancelledError(signal));
    const id = this.nextId++;
    const patch: Meta = {};
    const chain = chainOf(parent);
    // A chain the caller put in _meta itself wins: it knows better than we do.
    if (chain !== undefined && !(params?._meta && CHAIN_META_KEY in params._meta))
      patch[CHAIN_META_KEY] = chain;
    if (onProgress) patch.progressToken = id;
    const sent = Object.keys(patch).length ? withMeta(params, patch) : params;
    const message: JsonRpcRequest = {
      jsonrpc: '2.0',
      id,
      method,
      ...(sent !== undefined && { params: sent }),
    };

    return new Promise<T>((resolve, reject) => {
      const settle = () => {
        this.pending.delete(id);
        this.progress.delete(id);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        settle();
        const reason = signal?.reason instanceof Error ? signal.reason.message : signal?.reason;
        const params = { requestId: id, ...(typeof reason === 'string' && { reason }) };
        this.connection.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params }).catch(() => {});
        reject(cancelledError(signal));
      };
      this.pending.set(id, {
        resolve: (result) => {
          settle();
          resolve(result as T);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      if (onProgress) this.progress.set(id, onProgress);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.connection.send(message).catch((err: Error) => this.pending.get(id)?.reject(err));
    });
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

  private receive(value: unknown): void {
    const c = classify(value);
    switch (c.kind) {
      case 'response': {
        const { message } = c;
        if (isFailure(message)) {
          const error = new BridgeError(message.error.code, message.error.message, message.error.data);
          if (message.id === null) this.onError?.(error);
          else this.pending.get(message.id)?.reject(error);
        } else {
          this.pending.get(message.id)?.resolve(message.result);
        }
        return;
      }
      case 'notification': {
        const { method, params } = c.message;
        if (method === 'notifications/progress') {
          const token = params?.progressToken;
          if (typeof token === 'string' || typeof token === 'number') {
            this.progress.get(token)?.(params as unknown as ProgressNotificationParams);
          }
        } else if (method === 'notifications/cancelled') {
          const id = params?.requestId;
          if (typeof id === 'string' || typeof id === 'number') this.incoming.get(id)?.abort(params?.reason);
        } else {
          this.onNotification?.(method, params);
        }
        return;
      }
      case 'request':
        void this.serve(c.message);
        return;
      case 'invalid':
        this.onError?.(new BridgeError('protocol', `the bridge sent an invalid message: ${c.reason}`));
        return;
      default: {
        const never: never = c;
        return never;
      }
    }
  }

  private async serve(request: JsonRpcRequest): Promise<void> {
    const controller = new AbortController();
    this.incoming.set(request.id, controller);
    let reply: JsonRpcMessage;
    try {
      const result = await this.onRequest({
        id: request.id,
        method: request.method,
        params: request.params,
        signal: controller.signal,
      });
      reply = { jsonrpc: '2.0', id: request.id, result };
    } catch (err) {
      const error =
        err instanceof BridgeError && typeof err.code === 'number'
          ? { code: err.code, message: err.message, ...(err.data !== undefined && { data: err.data }) }
          : { code: -32603, message: err instanceof Error ? err.message : 'Internal error' };
      reply = { jsonrpc: '2.0', id: request.id, error };
    } finally {
      this.incoming.delete(request.id);
    }
    // A cancelled request gets no answer (MCP's rule for cancellation).
    if (controller.signal.aborted) return;
    await this.connection.send(reply).catch((err: Error) => this.onError?.(err));
  }

  private failAll(): void {
    const error = this.connection.closedError();
    for (const p of [...this.pending.values()]) p.reject(error);
    for (const c of this.incoming.values()) c.abort(error);
  }
}

function cancelledError(signal: AbortSignal | undefined): BridgeError {
  return new BridgeError('cancelled', 'the request was cancelled', undefined, { cause: signal?.reason });
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

/**
 * An MCP SDK Transport over the bridge: `start()` connects and authenticates, then messages pass
 * as they are, so `new Client(...).connect(createBridgeTransport())` works.
 */
export class BridgeTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  private connection: BridgeConnection | undefined;
  private started = false;

  constructor(private readonly options: BridgeConnectOptions = {}) {}

  /** Known after start(). */
  get session(): BridgeSession | undefined {
    return this.connection?.session;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('BridgeTransport already started');
    this.started = true;
    const connection = await BridgeConnection.open(this.options);
    this.connection = connection;
    connection.listen({
      message: (value) => {
        const c = classify(value);
        if (c.kind === 'invalid') this.onerror?.(new BridgeError('protocol', `invalid message: ${c.reason}`));
        else this.onmessage?.(value as JSONRPCMessage);
      },
      error: (error) => this.onerror?.(error),
      close: () => this.onclose?.(),
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.connection) throw new BridgeError('closed', 'BridgeTransport is not started');
    await this.connection.send(message);
  }

  async close(): Promise<void> {
    if (this.connection) await this.connection.close();
    else this.onclose?.();
  }
}

export function createBridgeTransport(options?: BridgeConnectOptions): BridgeTransport {
  return new BridgeTransport(options);
}
