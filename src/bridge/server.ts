// The bridge: a Unix socket, in a directory only switchboard's user can open, where backends call
// each other and switchboard's handlers. A connection proves its identity with its first message;
// after that it is a session like a host's, passing the same pipeline with the backend as caller.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { WIRE } from '../errors/errors.js';
import type { Gateway } from '../gateway/gateway.js';
import { classify, type JsonRpcMessage } from '../jsonrpc/message.js';
import { jsonLines, standInAnswer } from '../jsonrpc/json-lines.js';
import { BoundedWriter } from '../jsonrpc/bounded-writer.js';
import { LineSplitter } from '../jsonrpc/ndjson.js';
import type { Logger } from '../log.js';
import { openLineConnection, type LineConnection } from '../front/line-connection.js';
import { BRIDGE_PATH_ENV, BRIDGE_PROTOCOL, BRIDGE_TOKEN_ENV } from '../public/bridge-client/constants.js';
import { BridgeTokens, tokenDigest } from './tokens.js';
import { claimSocketPath } from './socket-path.js';

// The protocol's names are the public client's: one declaration for both ends of the socket.
export { BRIDGE_TOKEN_ENV as ENV_TOKEN } from '../public/bridge-client/constants.js';

/** A connection that has not authenticated by then is closed: it holds a descriptor for nothing. */
export const AUTH_TIMEOUT_MS = 10_000;

export interface BridgeOptions {
  /** Socket path; default: `bridge.sock` in a fresh 0700 directory under the temp dir. */
  socket?: string | undefined;
  /** The longest message read from a client, and sent to one (announced when it authenticates). */
  maxMessageBytes: number;
  /** A client that stops reading is cut off once this much is waiting to be written to it. */
  maxUnreadBytes: number;
  log: Logger;
}

export class BridgeServer {
  readonly tokens = new BridgeTokens();
  private server: Server | undefined;
  private ownedDir: string | undefined;
  private readonly connections = new Set<Socket>();
  /** Who each authenticated connection is, and (as a digest) the token it proved that with. */
  private readonly authenticated = new Map<Socket, { identity: string; token: Buffer }>();
  path = '';

  constructor(
    private readonly gateway: Gateway,
    private readonly options: BridgeOptions,
  ) {}

  async listen(): Promise<string> {
    let path = this.options.socket;
    if (!path) {
      this.ownedDir = mkdtempSync(join(tmpdir(), 'switchboard-'));
      path = join(this.ownedDir, 'bridge.sock');
    } else {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      await claimSocketPath(path);
    }
    // The directory's mode is the access control: only our user can reach the socket at all.
    chmodSync(dirname(path), 0o700);
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
    chmodSync(path, 0o600);
    this.path = path;
    return path;
  }

  /** The environment a spawned backend (replica) gets: where the bridge is and its token for this start. */
  environmentFor(identity: string, replica = 0): Record<string, string> {
    if (!this.path) return {};
    return { [BRIDGE_PATH_ENV]: this.path, [BRIDGE_TOKEN_ENV]: this.tokens.mint(identity, replica) };
  }

  /**
   * Ends what one start of a backend was given: its token stops authenticating and connections
   * made with it close, so nothing outlives the process it was minted for.
   */
  release(identity: string, token: string | undefined): void {
    if (!token) return;
    this.tokens.revoke(identity, token);
    const digest = tokenDigest(token);
    for (const [socket, who] of this.authenticated) {
      if (who.identity === identity && who.token.equals(digest)) socket.destroy();
    }
  }

  /** Bridge connections open now (authenticated or not yet). */
  get connectionCount(): number {
    return this.connections.size;
  }

  async close(): Promise<void> {
    for (const socket of this.connections) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    if (this.ownedDir) rmSync(this.ownedDir, { recursive: true, force: true });
    else if (this.path) rmSync(this.path, { force: true });
  }

  private accept(socket: Socket): void {
    this.connections.add(socket);
    const log = this.options.log;
    let session: LineConnection | undefined;
    let refused = false;
    // Answers finished in one turn of the event loop leave in at most two writes (see LineWriter);
    // the writer refuses what the client announced it cannot take, and a client that stops reading.
    const who = () => session?.session.caller.id;
    const writer = new BoundedWriter(socket, {
      maxMessageBytes: this.options.maxMessageBytes,
      maxUnreadBytes: this.options.maxUnreadBytes,
      oversized: (m, bytes, limit) =>
        log.warn(
          { identity: who(), id: 'id' in m ? m.id : undefined, bytes, limit },
          'bridge message over the message limit not sent',
        ),
      overflow: (_m, unread) => {
        log.warn({ identity: who(), unreadBytes: unread }, 'bridge client is not reading; connection closed');
        socket.destroy();
        return false;
      },
    });
    const write = (m: JsonRpcMessage): boolean => {
      if (socket.destroyed || !writer.send(m)) return false;
      // Backpressure: stop reading new requests from a client until it takes what we wrote.
      if (writer.needsDrain && !socket.isPaused()) {
        socket.pause();
        socket.once('drain', () => socket.resume());
      }
      return true;
    };
    // A line that fails before authentication is refused like a wrong token; after it, answered.
    const fault = (error?: JsonRpcMessage) => {
      if (refused) return;
      if (!session) return void (refused = this.refuse(socket, null));
      if (error) write(error);
    };
    const lines = new LineSplitter(
      this.options.maxMessageBytes,
      jsonLines(
        {
          message: (value) => {
            if (refused) return;
            if (session) return void session.receive(value);
            session = this.authenticate(value, socket, write);
            refused = session === undefined;
          },
          notJson: fault,
          oversized: (line) => {
            // Before authentication, refused as any bad line; after it, a request is answered by
            // its id, an answer fails the request it answered, a notification is dropped.
            const answer =
              session &&
              standInAnswer(line, 'the bridge client', 'message_too_large', (id) =>
                session!.session.awaits(id),
              );
            if (answer) return void session!.receive(answer);
            fault(line.reply);
          },
        },
        { bytes: true },
      ),
    );
    socket.on('data', (chunk: Buffer) => lines.push(chunk));
    socket.on('error', () => socket.destroy());
    const authTimer = setTimeout(() => {
      if (!session) socket.destroy();
    }, AUTH_TIMEOUT_MS);
    authTimer.unref();
    socket.on('close', () => {
      clearTimeout(authTimer);
      this.connections.delete(socket);
      this.authenticated.delete(socket);
      session?.close('the bridge connection closed');
    });
  }

  private authenticate(
    value: unknown,
    socket: Socket,
    write: (m: JsonRpcMessage) => boolean,
  ): LineConnection | undefined {
    const c = classify(value);
    const id = c.kind === 'invalid' ? c.id : 'id' in c.message ? c.message.id : null;
    const token =
      c.kind === 'request' && c.message.method === 'bridge/authenticate'
        ? c.message.params?.token
        : undefined;
    const identity = this.tokens.identify(token);
    if (!identity || typeof token !== 'string' || c.kind !== 'request') {
      this.refuse(socket, id);
      return undefined;
    }
    this.authenticated.set(socket, { identity, token: tokenDigest(token) });
    // Both eras, as on every front: modern requests are served statelessly beside the session.
    const session = openLineConnection(this.gateway, { kind: 'backend', id: identity }, write);
    write({
      jsonrpc: '2.0',
      id: c.message.id,
      result: { identity, protocol: BRIDGE_PROTOCOL, maxMessageBytes: this.options.maxMessageBytes },
    });
    this.options.log.debug({ identity }, 'bridge connection authenticated');
    return session;
  }

  /** Answers the first message with an authentication error, and nothing else, then hangs up. */
  private refuse(socket: Socket, id: unknown): true {
    const refusal = {
      jsonrpc: '2.0',
      id,
      error: { code: WIRE.AUTH_FAILED, message: 'Authentication failed' },
    };
    socket.end(JSON.stringify(refusal) + '\n');
    return true;
  }
}
