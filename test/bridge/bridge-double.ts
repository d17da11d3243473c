// A test double of the bridge's server side (real Unix socket, protocol switchboard-bridge/1) for client unit tests.
import { createServer, type Server, type Socket } from 'node:net';
import { EventEmitter, once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LineSplitter } from '../../src/jsonrpc/ndjson.js';

type Json = Record<string, unknown>;

export interface BridgeDouble {
  path: string;
  token: string;
  identity: string;
  /** 'cancelled' (requestId), 'request' (message), 'response' (message), 'authenticated', 'held' (count). */
  events: EventEmitter;
  /** Every message received after authentication, in order, per connection. */
  received: Json[];
  close(): Promise<void>;
}

const TOOLS = [
  { name: 'echo', description: 'Echo the arguments and _meta', inputSchema: { type: 'object' } },
  { name: 'slow', description: 'Answers only when cancelled', inputSchema: { type: 'object' } },
  { name: 'progress', description: 'Reports progress twice', inputSchema: { type: 'object' } },
  { name: 'hold', description: 'Held until release', inputSchema: { type: 'object' } },
  { name: 'ask', description: 'Asks the caller to sample', inputSchema: { type: 'object' } },
];

export async function startBridgeDouble(
  options: {
    token?: string;
    identity?: string;
    maxMessageBytes?: number;
    /** Sent in the same write as the authentication answer, before the client can have asked anything. */
    greeting?: Json;
  } = {},
): Promise<BridgeDouble> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-bd-'));
  const path = join(dir, 'bridge.sock');
  const token = options.token ?? 'test-token-0123456789';
  const identity = options.identity ?? 'double';
  const limit = options.maxMessageBytes ?? 4 * 1024 * 1024;
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const received: Json[] = [];
  const sockets = new Set<Socket>();

  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let authenticated = false;
    let serverIds = 0;
    const held: Json[] = [];
    const waiting = new Map<string | number, (msg: Json) => void>();
    let releasing: { id: unknown; count: number } | undefined;
    const send = (msg: Json) => socket.write(JSON.stringify(msg) + '\n');
    // Answers held calls last-first, so answers arrive in another order than the requests.
    const release = () => {
      if (!releasing || held.length < releasing.count) return;
      for (const h of held.splice(0).reverse()) {
        const args = ((h.params as Json).arguments ?? {}) as Json;
        result(h.id, { content: [{ type: 'text', text: JSON.stringify(args) }] });
      }
      result(releasing.id, {});
      releasing = undefined;
    };
    const result = (id: unknown, r: Json) => send({ jsonrpc: '2.0', id, result: r });
    const error = (id: unknown, code: number, message: string) =>
      send({ jsonrpc: '2.0', id, error: { code, message } });

    const onMessage = (msg: Json) => {
      const params = (msg.params ?? {}) as Json;
      const meta = (params._meta ?? {}) as Json;
      if (!authenticated) {
        if (msg.method === 'bridge/authenticate' && params.token === token) {
          authenticated = true;
          events.emit('authenticated');
          const answer = {
            jsonrpc: '2.0',
            id: msg.id,
            result: { identity, protocol: 'switchboard-bridge/1', maxMessageBytes: limit },
          };
          const lines = options.greeting ? [answer, options.greeting] : [answer];
          return void socket.write(lines.map((m) => JSON.stringify(m) + '\n').join(''));
        }
        error(msg.id ?? null, -32030, 'Authentication failed');
        return socket.end();
      }
      received.push(msg);
      if (!('method' in msg)) {
        events.emit('response', msg);
        const answer = waiting.get(msg.id as string | number);
        waiting.delete(msg.id as string | number);
        answer?.(msg);
        return;
      }
      if (!('id' in msg)) {
        if (msg.method === 'notifications/cancelled')
          events.emit('cancelled', params.requestId, params.reason);
        return;
      }
      events.emit('request', msg);
      const id = msg.id;
      switch (msg.method) {
        case 'ping':
          return result(id, {});
        case 'initialize':
          return result(id, {
            protocolVersion: params.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: 'bridge-double', version: '0.0.0' },
          });
        case 'tools/list': {
          // Two pages, so clients must follow nextCursor.
          if (params.cursor === 'page2') return result(id, { tools: TOOLS.slice(2) });
          return result(id, { tools: TOOLS.slice(0, 2), nextCursor: 'page2' });
        }
        case 'tools/call': {
          const name = params.name;
          const args = (params.arguments ?? {}) as Json;
          if (name === 'echo') {
            return result(id, { content: [{ type: 'text', text: JSON.stringify({ args, meta }) }] });
          }
          if (name === 'slow') {
            const onCancel = (requestId: unknown) => {
              if (requestId !== id) return;
              events.off('cancelled', onCancel);
              // Answer anyway, late: a client must ignore answers to requests it cancelled.
              result(id, { content: [{ type: 'text', text: 'too late' }] });
            };
            return void events.on('cancelled', onCancel);
          }
          if (name === 'progress') {
            const progressToken = meta.progressToken;
            for (const progress of [1, 2]) {
              send({
                jsonrpc: '2.0',
                method: 'notifications/progress',
                params: { progressToken, progress, total: 2 },
              });
            }
            return result(id, { content: [{ type: 'text', text: 'done' }] });
          }
          if (name === 'hold') {
            held.push(msg);
            events.emit('held', held.length);
            return release();
          }
          if (name === 'ask') {
            const askId = `s${++serverIds}`;
            waiting.set(askId, (answer) => {
              if ('error' in answer) return send({ jsonrpc: '2.0', id, error: answer.error });
              result(id, { content: [{ type: 'text', text: JSON.stringify(answer.result) }] });
            });
            return send({
              jsonrpc: '2.0',
              id: askId,
              method: 'sampling/createMessage',
              params: { messages: [], maxTokens: 1 },
            });
          }
          return error(id, -32602, `Unknown tool: ${String(name)}`);
        }
        case 'test.release':
          // Once `count` calls are held (default: those held now), answers them in reverse order.
          releasing = { id, count: typeof params.count === 'number' ? params.count : held.length };
          return release();
        case 'test.echo':
          return result(id, params);
        case 'test.fail':
          return send({
            jsonrpc: '2.0',
            id,
            error: { code: -32031, message: 'Call cycle: a -> b -> a', data: { path: ['a', 'b'] } },
          });
        default:
          return error(id, -32601, `Method not found: ${String(msg.method)}`);
      }
    };

    const splitter = new LineSplitter(limit, {
      line: (text) => {
        let msg: Json;
        try {
          msg = JSON.parse(text) as Json;
        } catch {
          return error(null, -32700, 'Parse error');
        }
        onMessage(msg);
      },
      oversized: () => {
        if (!authenticated) {
          error(null, -32030, 'Authentication failed');
          return socket.end();
        }
        error(null, -32600, 'Message too large');
      },
    });
    socket.on('data', (chunk: Buffer) => splitter.push(chunk));
  });
  server.listen(path);
  await once(server, 'listening');

  return {
    path,
    token,
    identity,
    events,
    received,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
