// One authenticated bridge socket: dialling, authentication, and the only code that limits and
// writes lines, shared by the typed client and the SDK transport.
import { createConnection, type Socket } from 'node:net';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import type { JsonRpcMessage } from '../../jsonrpc/message.js';
import { authenticate, type BridgeSession } from './authenticate.js';
import { BRIDGE_PATH_ENV, BRIDGE_TOKEN_ENV, DEFAULT_MAX_MESSAGE_BYTES } from './constants.js';
import { BridgeError } from './errors.js';
import { Inbox } from './inbox.js';

export interface BridgeConnectOptions {
  /** Socket path (default: `env.SWITCHBOARD_BRIDGE`). */
  path?: string;
  /** Token (default: `env.SWITCHBOARD_BRIDGE_TOKEN`). */
  token?: string;
  env?: NodeJS.ProcessEnv;
  /** Largest incoming line accepted (default: the limit the server announces). */
  maxMessageBytes?: number;
}

interface ConnectionHandlers {
  message(value: unknown): void;
  error(error: Error): void;
  close(): void;
}

/**
 * One authenticated bridge socket. Reading stays paused after authentication until `listen()`,
 * so no message arrives before its handler exists.
 */
export class BridgeConnection {
  private draining: Promise<void> | undefined;
  private isClosed = false;
  private lastError: Error | undefined;
  private handlers: ConnectionHandlers | undefined;
  private readonly closedPromise: Promise<void>;

  private constructor(
    private readonly socket: Socket,
    readonly session: BridgeSession,
    private readonly inbox: Inbox,
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
    const socket = await dial(path);
    const inbox = new Inbox(socket, options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
    try {
      const session = await authenticate(socket, inbox, token, options.maxMessageBytes);
      return new BridgeConnection(socket, session, inbox);
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
    this.inbox.readInto({
      message: (value) => handlers.message(value),
      notJson: () => handlers.error(new BridgeError('protocol', 'the bridge sent a line that is not JSON')),
      oversized: (bytes, limit) =>
        handlers.error(
          new BridgeError(
            'message_too_large',
            `dropped an incoming message of at least ${bytes} bytes (limit ${limit})`,
          ),
        ),
    });
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
          { cause: err },
        ),
      );
    socket.once('error', onError);
    socket.once('connect', () => {
      socket.off('error', onError);
      resolve(socket);
    });
  });
}
