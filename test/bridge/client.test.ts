// The TypeScript bridge client against a protocol double of the bridge server: framing, auth, concurrency.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import {
  BridgeError,
  CHAIN_META_KEY,
  chainMeta,
  connectBridge,
  createBridgeTransport,
  sharedBridge,
  type BridgeClient,
} from '../../src/public/bridge-client/index.js';
import { startBridgeDouble, type BridgeDouble } from './bridge-double.js';
import { expectedSignature, startRealBridge, type RealBridge } from './real-switchboard.js';

type Json = Record<string, unknown>;

function textOf(result: { content?: unknown }): string {
  const first = (result.content as { type: string; text: string }[] | undefined)?.[0];
  assert.equal(first?.type, 'text');
  return first.text;
}

function envOf(d: BridgeDouble): NodeJS.ProcessEnv {
  return { SWITCHBOARD_BRIDGE: d.path, SWITCHBOARD_BRIDGE_TOKEN: d.token };
}

describe('bridge client connection', () => {
  let double: BridgeDouble;
  before(async () => {
    double = await startBridgeDouble({ identity: 'alpha' });
  });
  after(() => double.close());

  test('refuses to start without the bridge environment', async () => {
    await assert.rejects(connectBridge({ env: {} }), (err: unknown) => {
      assert.ok(err instanceof BridgeError);
      assert.equal(err.code, 'not_configured');
      assert.match(err.message, /SWITCHBOARD_BRIDGE is not set/);
      return true;
    });
    await assert.rejects(connectBridge({ env: { SWITCHBOARD_BRIDGE: double.path } }), (err: unknown) => {
      assert.ok(err instanceof BridgeError);
      assert.equal(err.code, 'not_configured');
      assert.match(err.message, /SWITCHBOARD_BRIDGE_TOKEN is not set/);
      return true;
    });
  });

  test('a shared bridge hands out one connection, and a new one once that has closed', async () => {
    const bridge = sharedBridge({ env: envOf(double) });
    const first = await bridge();
    assert.equal(await bridge(), first);
    await first.close();
    await first.closed;
    const second = await bridge();
    assert.notEqual(second, first);
    assert.equal(second.identity, 'alpha');
    await second.close();
  });

  test('a shared bridge tries again after a failed connect instead of keeping the failure', async () => {
    const env: NodeJS.ProcessEnv = { SWITCHBOARD_BRIDGE: double.path, SWITCHBOARD_BRIDGE_TOKEN: 'wrong' };
    const bridge = sharedBridge({ env });
    await assert.rejects(bridge());
    env.SWITCHBOARD_BRIDGE_TOKEN = double.token;
    const client = await bridge();
    assert.equal(client.identity, 'alpha');
    await client.close();
  });

  test('reports a missing socket as unavailable', async () => {
    const path = join(double.path, '..', 'absent.sock');
    await assert.rejects(connectBridge({ path, token: 'x' }), (err: unknown) => {
      assert.ok(err instanceof BridgeError);
      assert.equal(err.code, 'unavailable');
      assert.match(err.message, /ENOENT/);
      return true;
    });
  });

  test('authenticates with the token from the environment and learns its identity', async () => {
    const client = await connectBridge({ env: envOf(double) });
    try {
      assert.equal(client.identity, 'alpha');
      assert.equal(client.session.protocol, 'switchboard-bridge/1');
      assert.deepEqual(await client.ping(), {});
    } finally {
      await client.close();
    }
  });

  test('rejects a wrong token with -32030 and never leaks it', async () => {
    await assert.rejects(connectBridge({ path: double.path, token: 'wrong-secret' }), (err: unknown) => {
      assert.ok(err instanceof BridgeError);
      assert.equal(err.code, -32030);
      assert.equal(err.message, 'Authentication failed');
      assert.doesNotMatch(err.message, /wrong-secret/);
      return true;
    });
  });
});

describe('bridge client requests', () => {
  let double: BridgeDouble;
  let client: BridgeClient;
  before(async () => {
    double = await startBridgeDouble({ identity: 'beta', maxMessageBytes: 64 * 1024 });
    client = await connectBridge({ env: envOf(double) });
  });
  after(async () => {
    await client.close();
    await double.close();
  });

  test('lists every tool across pages', async () => {
    const { tools, nextCursor } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['echo', 'slow', 'progress', 'hold', 'ask'],
    );
    assert.equal(nextCursor, undefined);
  });

  test('matches many requests in flight to answers that arrive out of order', async () => {
    const n = 25;
    const reached = new Promise<void>((resolve) =>
      double.events.on('held', function onHeld(count: number) {
        if (count === n) {
          double.events.off('held', onHeld);
          resolve();
        }
      }),
    );
    const calls = Array.from({ length: n }, (_, i) => client.callTool('hold', { i }));
    await reached;
    await client.call('test.release');
    const results = await Promise.all(calls);
    assert.deepEqual(
      results.map((r) => JSON.parse(textOf(r)) as Json),
      Array.from({ length: n }, (_, i) => ({ i })),
    );
  });

  test('cancels through an AbortSignal and ignores the late answer', async () => {
    const controller = new AbortController();
    const started = once(double.events, 'request');
    const call = client.callTool('slow', {}, { signal: controller.signal });
    const [request] = (await started) as [Json];
    const cancelled = once(double.events, 'cancelled');
    controller.abort(new Error('user gave up'));
    await assert.rejects(call, (err: unknown) => err instanceof BridgeError && err.code === 'cancelled');
    const [requestId, reason] = await cancelled;
    assert.equal(requestId, request.id);
    assert.equal(reason, 'user gave up');
    // The double answers after the cancel; the connection must go on untroubled.
    assert.deepEqual(await client.ping(), {});
  });

  test('does not send a request whose signal is already aborted', async () => {
    const before = double.received.length;
    await assert.rejects(
      client.callTool('echo', {}, { signal: AbortSignal.abort() }),
      (err: unknown) => err instanceof BridgeError && err.code === 'cancelled',
    );
    await client.ping();
    assert.equal(double.received.length, before + 1);
  });

  test('delivers progress for the request that asked for it', async () => {
    const seen: number[] = [];
    const result = await client.callTool('progress', {}, { onProgress: (p) => seen.push(p.progress) });
    assert.equal(textOf(result), 'done');
    assert.deepEqual(seen, [1, 2]);
  });

  test('carries the call chain of the request being served', async () => {
    const chain = { id: 'call-7', path: ['alpha', 'beta'] };
    const echo = async (opts: Parameters<BridgeClient['callTool']>[2], meta?: Json) =>
      (JSON.parse(textOf(await client.callTool('echo', meta ? { _meta: meta } : {}, opts))) as { meta: Json })
        .meta;
    // From ctx.mcpReq._meta, from params, from a whole request: the same chain goes out.
    assert.deepEqual(
      (await echo({ parent: { [CHAIN_META_KEY]: chain, progressToken: 9 } }))[CHAIN_META_KEY],
      chain,
    );
    assert.deepEqual((await echo({ parent: { _meta: { [CHAIN_META_KEY]: chain } } }))[CHAIN_META_KEY], chain);
    assert.deepEqual(
      (await echo({ parent: { method: 'tools/call', params: { _meta: { [CHAIN_META_KEY]: chain } } } }))[
        CHAIN_META_KEY
      ],
      chain,
    );
    // Only the chain is copied, never the parent's other _meta (its progress token is not ours).
    assert.equal(
      (await echo({ parent: { [CHAIN_META_KEY]: chain, progressToken: 9 } })).progressToken,
      undefined,
    );
    // No parent: a new chain.
    assert.deepEqual(await echo({}), {});
    assert.deepEqual(chainMeta({}), {});
    assert.deepEqual(chainMeta({ _meta: { [CHAIN_META_KEY]: chain } }), { [CHAIN_META_KEY]: chain });
  });

  test('keeps a chain the caller set in _meta itself', async () => {
    const own = { id: 'own', path: ['x'] };
    const result = await client.request<{ _meta: Json }>(
      'test.echo',
      { _meta: { [CHAIN_META_KEY]: own } },
      { parent: { [CHAIN_META_KEY]: { id: 'other', path: ['y'] } } },
    );
    assert.deepEqual(result._meta[CHAIN_META_KEY], own);
  });

  test('surfaces server errors as BridgeError with code, message and data', async () => {
    await assert.rejects(client.call('test.fail'), (err: unknown) => {
      assert.ok(err instanceof BridgeError);
      assert.equal(err.code, -32031);
      assert.equal(err.message, 'Call cycle: a -> b -> a');
      assert.deepEqual(err.data, { path: ['a', 'b'] });
      return true;
    });
    await assert.rejects(
      client.callTool('nope'),
      (err: unknown) =>
        err instanceof BridgeError && err.code === -32602 && err.message === 'Unknown tool: nope',
    );
    await assert.rejects(
      client.call('vault.sign', { key: 'k' }),
      (err: unknown) => err instanceof BridgeError && err.code === -32601,
    );
  });

  test('answers server requests with -32601 unless onRequest serves them', async () => {
    await assert.rejects(
      client.callTool('ask'),
      (err: unknown) => err instanceof BridgeError && err.code === -32601,
    );
    client.onRequest = (request) => {
      assert.equal(request.method, 'sampling/createMessage');
      return { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' };
    };
    try {
      const result = await client.callTool('ask');
      assert.deepEqual(JSON.parse(textOf(result)), {
        role: 'assistant',
        content: { type: 'text', text: 'hi' },
        model: 'm',
      });
    } finally {
      client.onRequest = (request) => {
        throw new BridgeError(-32601, `Method not found: ${request.method}`);
      };
    }
  });

  test('refuses locally a message larger than the limit the server announced', async () => {
    assert.equal(client.session.maxMessageBytes, 64 * 1024);
    const before = double.received.length;
    await assert.rejects(
      client.call('test.echo', { blob: 'x'.repeat(70 * 1024) }),
      (err: unknown) => err instanceof BridgeError && err.code === 'message_too_large',
    );
    await client.ping();
    assert.equal(double.received.length, before + 1);
  });

  test('keeps every message whole under backpressure', async () => {
    // 64 × 60 KiB outruns any socket buffer, so writes must wait for 'drain' and stay in order.
    const blobs = Array.from({ length: 64 }, (_, i) => String(i % 10).repeat(60 * 1024));
    const results = await Promise.all(blobs.map((blob, i) => client.call<Json>('test.echo', { i, blob })));
    results.forEach((r, i) => {
      assert.equal(r.i, i);
      assert.equal(r.blob, blobs[i]);
    });
  });
});

describe('bridge client limits and lifecycle', () => {
  test('drops an incoming message over its own limit, reports it, and goes on', async () => {
    const double = await startBridgeDouble();
    const client = await connectBridge({ env: envOf(double), maxMessageBytes: 1024 });
    try {
      const errors: Error[] = [];
      const reported = new Promise<void>((resolve) => {
        client.onError = (err) => {
          errors.push(err);
          resolve();
        };
      });
      const controller = new AbortController();
      const big = client.call('test.echo', { blob: 'y'.repeat(4096) }, { signal: controller.signal });
      await reported;
      assert.ok(errors[0] instanceof BridgeError && errors[0].code === 'message_too_large');
      controller.abort();
      await assert.rejects(big, (err: unknown) => err instanceof BridgeError && err.code === 'cancelled');
      assert.deepEqual(await client.ping(), {});
    } finally {
      await client.close();
      await double.close();
    }
  });

  test('serves a request that arrived with the authentication answer, once the client listens', async () => {
    const greeting = { jsonrpc: '2.0', id: 'early-1', method: 'roots/list' };
    const double = await startBridgeDouble({ greeting });
    const answered = once(double.events, 'response');
    const client = await connectBridge({ env: envOf(double) });
    try {
      const [answer] = (await answered) as [Json];
      assert.deepEqual(answer, {
        jsonrpc: '2.0',
        id: 'early-1',
        error: { code: -32601, message: 'Method not found: roots/list' },
      });
    } finally {
      await client.close();
      await double.close();
    }
  });

  test('rejects requests in flight when the connection closes', async () => {
    const double = await startBridgeDouble();
    const client = await connectBridge({ env: envOf(double) });
    try {
      const started = once(double.events, 'request');
      const call = client.callTool('slow');
      await started;
      await client.close();
      await assert.rejects(call, (err: unknown) => err instanceof BridgeError && err.code === 'closed');
      await assert.rejects(
        client.ping(),
        (err: unknown) => err instanceof BridgeError && err.code === 'closed',
      );
    } finally {
      await double.close();
    }
  });

  test('carries an MCP SDK Client as a Transport', async () => {
    const double = await startBridgeDouble({ identity: 'gamma' });
    const transport = createBridgeTransport({ env: envOf(double) });
    const client = new Client({ name: 'bridge-test', version: '0.0.0' });
    try {
      await client.connect(transport);
      assert.equal(transport.session?.identity, 'gamma');
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        ['echo', 'slow', 'progress', 'hold', 'ask'],
      );
      const result = await client.callTool({ name: 'echo', arguments: { a: 1 } });
      assert.deepEqual((JSON.parse(textOf(result)) as Json).args, { a: 1 });
      assert.equal(double.received[0]?.method, 'initialize');
    } finally {
      await client.close();
      await double.close();
    }
  });

  test('fails Transport.start with -32030 on a wrong token', async () => {
    const double = await startBridgeDouble();
    try {
      const transport = createBridgeTransport({ path: double.path, token: 'bad' });
      await assert.rejects(
        transport.start(),
        (err: unknown) => err instanceof BridgeError && err.code === -32030,
      );
    } finally {
      await double.close();
    }
  });
});

describe('bridge client against a real switchboard', () => {
  let real: RealBridge;
  before(async () => {
    real = await startRealBridge();
  });
  after(() => real.stop());

  test('authenticates as the backend it runs in and sees only the tools its policy grants', async () => {
    const out = await real.callCaller('relay', { method: 'tools/list' });
    assert.equal(out.identity, 'caller');
    const names = ((out.result as { tools: { name: string }[] }).tools ?? []).map((t) => t.name).sort();
    assert.ok(names.includes('memory_create_entities'), names.join());
    assert.ok(names.includes('caller_relay'));
    assert.ok(
      names.every((n) => n.startsWith('memory_') || n === 'caller_relay'),
      names.join(),
    );
  });

  test("calls a real backend's tool", async () => {
    const created = await real.callCaller('relay', {
      method: 'tools/call',
      params: {
        name: 'memory_create_entities',
        arguments: { entities: [{ name: 'ts-bridge', entityType: 'test', observations: ['via TS'] }] },
      },
    });
    assert.equal(created.error, undefined, JSON.stringify(created.error));
    const graph = await real.callCaller('relay', {
      method: 'tools/call',
      params: { name: 'memory_read_graph', arguments: {} },
    });
    assert.match(JSON.stringify(graph.result), /ts-bridge/);
  });

  test('calls a handler inside switchboard', async () => {
    const out = await real.callCaller('relay', {
      method: 'vault.sign',
      params: { key: 'demo', data: 'hello' },
    });
    assert.deepEqual(out.result, {
      signature: expectedSignature('hello'),
      algorithm: 'hmac-sha256',
      key: 'demo',
    });
  });

  test('a tool outside its grant looks unknown, a handler outside it is not found', async () => {
    const tool = await real.callCaller('relay', {
      method: 'tools/call',
      params: { name: 'caller_sdk', arguments: {} },
    });
    assert.deepEqual(tool.error, { code: -32602, message: 'Unknown tool: caller_sdk' });
    const handler = await real.callCaller('relay', { method: 'vault.keys' });
    assert.equal((handler.error as { code: number }).code, -32601);
  });

  test('carries the call chain, so switchboard refuses a cycle', async () => {
    const out = await real.callCaller('relay', {
      method: 'tools/call',
      params: { name: 'caller_relay', arguments: { method: 'ping' } },
    });
    const error = out.error as { code: number; message: string };
    assert.equal(error.code, -32031);
    assert.match(error.message, /caller -> caller/);
  });

  test('carries an MCP SDK Client over the bridge transport', async () => {
    const out = await real.callCaller('sdk', { name: 'memory_read_graph' });
    assert.equal(out.error, undefined, JSON.stringify(out.error));
    assert.equal(out.identity, 'caller');
    assert.ok((out.tools as string[]).includes('memory_read_graph'));
    assert.ok(Array.isArray((out.result as { content: unknown[] }).content));
  });

  test('a wrong token gets -32030', async () => {
    await assert.rejects(
      connectBridge({ path: real.sb.bridgePath, token: 'not-a-token' }),
      (err: unknown) => {
        assert.ok(err instanceof BridgeError);
        assert.equal(err.code, -32030);
        return true;
      },
    );
  });
});
