// The bridge server against misbehaving and ordinary clients on its real socket: authentication, framing, limits, grants, tokens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { WIRE, WireError } from '../../src/errors/errors.js';
import type { CallContext } from '../../src/call/context.js';
import { startHops, type HopSwitchboard, type Json } from './hop-switchboard.js';
import { until } from '../support/poll.js';

const REMOTE_TOKEN = randomBytes(24).toString('base64url');
const SLOW_TOKEN = randomBytes(24).toString('base64url');
const OFF_TOKEN = randomBytes(24).toString('base64url');
const LIMIT = 256 * 1024;
// Nothing listens there: these entries exist for their bridge identities (remote callers).
const NOWHERE = 'http://127.0.0.1:1/mcp';

/** Every byte any raw client received, for the check that no token ever comes back. */
const received: Buffer[] = [];

/** A bridge client written against the socket directly, to send what a well-behaved one never would. */
class Raw {
  readonly lines: Json[] = [];
  readonly closed: Promise<void>;
  private buffer = '';
  private waiters: (() => void)[] = [];

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      this.buffer += chunk.toString();
      for (let nl = this.buffer.indexOf('\n'); nl !== -1; nl = this.buffer.indexOf('\n')) {
        this.lines.push(JSON.parse(this.buffer.slice(0, nl)) as Json);
        this.buffer = this.buffer.slice(nl + 1);
      }
      for (const w of this.waiters.splice(0)) w();
    });
    socket.on('error', () => {});
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.once('end', () => this.waiters.splice(0).forEach((w) => w()));
    void this.closed.then(() => this.waiters.splice(0).forEach((w) => w()));
  }

  static async open(path: string): Promise<Raw> {
    const socket = createConnection({ path });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new Raw(socket);
  }

  /** Connects and authenticates; fails unless the bridge accepts the token. */
  static async as(path: string, token: string): Promise<Raw> {
    const raw = await Raw.open(path);
    const answer = await raw.request('bridge/authenticate', { token }, 1);
    assert.equal(answer.error, undefined, JSON.stringify(answer));
    return raw;
  }

  private nextId = 100;

  write(text: string): void {
    this.socket.write(text);
  }

  send(message: Json): void {
    this.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
  }

  async request(method: string, params?: Json, id: number = this.nextId++): Promise<Json> {
    this.send({ id, method, ...(params && { params }) });
    return this.answerTo(id);
  }

  /** Resolves once `count` lines have arrived, or the connection closed. */
  async linesOrClose(count: number): Promise<void> {
    while (this.lines.length < count && !this.socket.destroyed && !this.socket.readableEnded)
      await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  async answerTo(id: number | null): Promise<Json> {
    for (;;) {
      const found = this.lines.find((l) => l.id === id && ('result' in l || 'error' in l));
      if (found) return found;
      if (this.socket.destroyed || this.socket.readableEnded)
        throw new Error(`closed before answering ${id}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

let hops: HopSwitchboard;
let path: string;
const tokens: string[] = [REMOTE_TOKEN, SLOW_TOKEN, OFF_TOKEN];

before(async () => {
  hops = await startHops({ x: ['x_call'], t: [] }, () => ({
    limits: { maxMessageBytes: LIMIT },
    servers: {
      remote: {
        url: NOWHERE,
        bridge: { token: REMOTE_TOKEN, allow: ['x_call', 'x_block', 'x_events', 'test.*'] },
      },
      slow: { url: NOWHERE, bridge: { token: SLOW_TOKEN, allow: ['x_big'] } },
      off: { url: NOWHERE, disabled: true, bridge: { token: OFF_TOKEN, allow: ['*'] } },
    },
  }));
  path = hops.sb.bridgePath!;
  tokens.push(
    readFileSync(join(hops.dir, 'x.token'), 'utf8'),
    readFileSync(join(hops.dir, 't.token'), 'utf8'),
  );
  hops.sb.gateway.handlers.register(
    'test.throw',
    () => {
      throw new Error('internal detail that must stay inside');
    },
    'test',
  );
  hops.sb.gateway.handlers.register(
    'test.refuse',
    () => {
      throw new WireError(WIRE.INVALID_PARAMS, 'refused on purpose');
    },
    'test',
  );
  hops.sb.gateway.handlers.register('test.echo', (params) => ({ echoed: params.text ?? null }), 'test');
});
after(() => hops.stop());

/** Sends `first` and a ping after it in one write, and reads what comes back until the server hangs up. */
async function refusedAfter(first: string): Promise<Json[]> {
  const raw = await Raw.open(path);
  raw.write(first + '\n' + JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) + '\n');
  // Two lines mean the ping was answered: the server let the connection in.
  await raw.linesOrClose(2);
  if (raw.lines.length < 2) assert.ok(raw.socket.readableEnded, 'the server did not hang up');
  raw.close();
  return raw.lines;
}

const auth = (params: Json) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'bridge/authenticate', params });
const AUTH_FAILED = { code: -32030, message: 'Authentication failed' };

test('a connection that does not authenticate first gets -32030 and is closed, with nothing else sent', async () => {
  assert.deepEqual(await refusedAfter(auth({})), [{ jsonrpc: '2.0', id: 1, error: AUTH_FAILED }]);
  assert.deepEqual(await refusedAfter(auth({ token: 'not-a-token-of-anyone' })), [
    { jsonrpc: '2.0', id: 1, error: AUTH_FAILED },
  ]);
  assert.deepEqual(await refusedAfter(auth({ token: REMOTE_TOKEN.slice(0, -1) })), [
    { jsonrpc: '2.0', id: 1, error: AUTH_FAILED },
  ]);
  const listFirst = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' });
  assert.deepEqual(await refusedAfter(listFirst), [{ jsonrpc: '2.0', id: 7, error: AUTH_FAILED }]);
  assert.deepEqual(await refusedAfter('this is not json'), [
    { jsonrpc: '2.0', id: null, error: AUTH_FAILED },
  ]);
  assert.deepEqual(await refusedAfter('x'.repeat(LIMIT + 10)), [
    { jsonrpc: '2.0', id: null, error: AUTH_FAILED },
  ]);
});

test("a disabled server's configured token does not authenticate", async () => {
  assert.deepEqual(await refusedAfter(auth({ token: OFF_TOKEN })), [
    { jsonrpc: '2.0', id: 1, error: AUTH_FAILED },
  ]);
});

test('lines that are not JSON or not JSON-RPC are answered with errors and the connection goes on', async () => {
  const raw = await Raw.as(path, REMOTE_TOKEN);
  try {
    raw.write('{ this is not json\n');
    assert.equal(((await raw.answerTo(null)).error as Json).code, -32700);
    raw.lines.length = 0;
    raw.write('{"jsonrpc":"2.0","id":5,"no":"method"}\n');
    assert.equal(((await raw.answerTo(5)).error as Json).code, -32600);
    assert.deepEqual((await raw.request('ping')).result, {});
    assert.deepEqual((await raw.request('test.echo', { text: 'still here' })).result, {
      echoed: 'still here',
    });
  } finally {
    raw.close();
  }
});

test('an oversized request is refused to its id without being run, and the connection goes on', async () => {
  const raw = await Raw.as(path, REMOTE_TOKEN);
  try {
    raw.send({ id: 9, method: 'test.echo', params: { text: 'y'.repeat(LIMIT) } });
    const refused = await raw.answerTo(9);
    assert.equal((refused.error as Json).code, -32600);
    assert.match(String((refused.error as Json).message), /exceeds the limit/);
    assert.deepEqual((await raw.request('test.echo', { text: 'small' })).result, { echoed: 'small' });
    assert.deepEqual(
      raw.lines.filter((l) => l.id === 9).map((l) => 'result' in l),
      [false],
      'one answer, the refusal: the handler never ran',
    );
  } finally {
    raw.close();
  }
});

test('a handler that throws answers its caller with an error, and the connection goes on', async () => {
  const raw = await Raw.as(path, REMOTE_TOKEN);
  try {
    assert.deepEqual((await raw.request('test.throw')).error, { code: -32603, message: 'Internal error' });
    assert.deepEqual((await raw.request('test.refuse')).error, {
      code: -32602,
      message: 'refused on purpose',
    });
    assert.deepEqual((await raw.request('test.echo', { text: 'fine' })).result, { echoed: 'fine' });
  } finally {
    raw.close();
  }
});

test('a granted backend sees only what it is granted, and a denied name answers exactly as an unknown one', async () => {
  const raw = await Raw.as(path, REMOTE_TOKEN);
  try {
    const tools = ((await raw.request('tools/list')).result as { tools: { name: string }[] }).tools;
    assert.deepEqual(tools.map((t) => t.name).sort(), ['x_block', 'x_call', 'x_events']);
    assert.deepEqual(((await raw.request('prompts/list')).result as Json).prompts, []);
    assert.deepEqual(((await raw.request('resources/list')).result as Json).resources, []);
    // The same request for a name that exists but is not granted, and for one that does not exist.
    const pairs: [string, (name: string) => Json, string, string][] = [
      ['tools/call', (n) => ({ name: n, arguments: { bytes: 1 } }), 'x_big', 'x_nothing'],
      ['prompts/get', (n) => ({ name: n, arguments: { name: 'a' } }), 'x_greet', 'x_nothing'],
      ['resources/read', (n) => ({ uri: n }), 'x+hop://info', 'x+hop://nothing'],
      [
        'completion/complete',
        (n) => ({ ref: { type: 'ref/prompt', name: n }, argument: { name: 'name', value: '' } }),
        'x_greet',
        'x_nothing',
      ],
      [
        'completion/complete',
        (n) => ({ ref: { type: 'ref/resource', uri: n }, argument: { name: 'a', value: '' } }),
        'x+hop://info',
        'x+hop://nothing',
      ],
      ['test.unknown', () => ({}), '', ''],
    ];
    for (const [method, params, denied, unknown] of pairs) {
      const a = await raw.request(method, params(denied));
      const b = await raw.request(method, params(unknown));
      assert.ok(a.error, `${method} ${denied} was answered: ${JSON.stringify(a)}`);
      assert.deepEqual(
        JSON.parse(JSON.stringify(a.error).replaceAll(denied || '\0', unknown)),
        b.error,
        `${method}: ${denied} and ${unknown} answer differently`,
      );
    }
    // A handler outside the grant is as unknown as one nobody registered.
    const vault = await raw.request('vault.keys');
    const none = await raw.request('nothing.here');
    assert.deepEqual(vault.error, { code: -32601, message: 'Method not found: vault.keys' });
    assert.deepEqual(none.error, { code: -32601, message: 'Method not found: nothing.here' });
  } finally {
    raw.close();
  }
});

/** How many times the `x` backend saw each event so far. */
async function xEvents(): Promise<Record<string, number>> {
  const events = (await hops.call('x_events')) as unknown as { event: string }[];
  const counts: Record<string, number> = {};
  for (const e of events) counts[e.event] = (counts[e.event] ?? 0) + 1;
  return counts;
}

test('one bridge connection serves both eras: a modern request statelessly, beside the session, under the same grants', async () => {
  const raw = await Raw.as(path, REMOTE_TOKEN);
  try {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const listed = (await raw.request('tools/list', { _meta: meta })).result as Json;
    assert.equal(listed.resultType, 'complete');
    assert.deepEqual((listed.tools as { name: string }[]).map((t) => t.name).sort(), [
      'x_block',
      'x_call',
      'x_events',
    ]);
    const discover = (await raw.request('server/discover', { _meta: meta })).result as Json;
    assert.ok((discover.supportedVersions as string[]).includes('2026-07-28'));
    // The modern era's rules: a removed method is unknown there, a bad envelope is refused.
    assert.equal(((await raw.request('ping', { _meta: meta })).error as Json).code, WIRE.METHOD_NOT_FOUND);
    const broken = (
      await raw.request('tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } })
    ).error as Json;
    assert.equal(broken.code, WIRE.INVALID_PARAMS);
    assert.match(String(broken.message), /envelope/);
    // An ungranted tool is as unknown on the modern wire as on the session.
    const denied = (await raw.request('tools/call', { name: 'x_big', arguments: {}, _meta: meta }))
      .error as Json;
    assert.equal(denied.message, 'Unknown tool: x_big');
    // The session beside it is untouched: legacy answers carry no modern fields.
    const legacy = (await raw.request('tools/list')).result as Json;
    assert.equal(legacy.resultType, undefined);
  } finally {
    raw.close();
  }
});

test('a connection that drops mid-call has that call cancelled, and other connections carry on', async () => {
  const other = await Raw.as(path, REMOTE_TOKEN);
  const dropping = await Raw.as(path, REMOTE_TOKEN);
  try {
    const before = await xEvents();
    dropping.send({ id: 3, method: 'tools/call', params: { name: 'x_block', arguments: {} } });
    await until(
      async () => ((await xEvents()).started ?? 0) > (before.started ?? 0) || undefined,
      'x_block to start',
    );
    dropping.close();
    await until(
      async () => ((await xEvents()).cancelled ?? 0) > (before.cancelled ?? 0) || undefined,
      'x_block to be cancelled',
    );
    assert.deepEqual((await other.request('ping')).result, {});
    const listed = await other.request('tools/call', { name: 'x_events', arguments: {} });
    assert.equal(listed.error, undefined);
  } finally {
    dropping.close();
    other.close();
  }
});

test('a client that never reads stops being read, while other connections are served', async () => {
  const started: CallContext[] = [];
  const onStart = (message: unknown) => {
    const { ctx } = message as { ctx: CallContext };
    if (ctx.caller.id === 'slow') started.push(ctx);
  };
  subscribe('switchboard:call:start', onStart);
  const socket = createConnection({ path });
  socket.on('error', () => {});
  socket.pause();
  const other = await Raw.as(path, REMOTE_TOKEN);
  try {
    const count = 20_000;
    let batch = auth({ token: SLOW_TOKEN }) + '\n';
    for (let id = 2; id < count + 2; id++) batch += `{"jsonrpc":"2.0","id":${id},"method":"tools/list"}\n`;
    socket.write(batch);
    await until(async () => (started.length > 0 ? true : undefined), 'the first request to be read');
    // Others are answered while the non-reader sits there; many round trips give the server every
    // chance to read on, if it would.
    for (let i = 0; i < 50; i++) assert.deepEqual((await other.request('ping')).result, {});
    assert.deepEqual((await other.request('test.echo', { text: 'served' })).result, { echoed: 'served' });
    assert.ok(started.length < count, `read all ${count} requests of a client that reads nothing`);
    assert.ok(socket.writableLength > 0, 'the server went on draining a client that reads nothing');
  } finally {
    unsubscribe('switchboard:call:start', onStart);
    socket.destroy();
    other.close();
  }
});

test('a client that never reads is cut off once too much waits for it, while others are served', async () => {
  const socket = createConnection({ path });
  socket.on('error', () => {});
  socket.pause();
  const other = await Raw.as(path, REMOTE_TOKEN);
  try {
    // 120 answers of 200 kB: more than the 8 MiB a connection may leave unread (limits.maxUnreadBytes).
    let batch = auth({ token: SLOW_TOKEN }) + '\n';
    for (let id = 2; id < 122; id++) {
      batch += JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'x_big', arguments: { bytes: 200_000 } },
      });
      batch += '\n';
    }
    socket.write(batch);
    await until(
      async () => (hops.log().includes('bridge client is not reading; connection closed') ? true : undefined),
      'the non-reading client to be cut off',
    );
    assert.deepEqual((await other.request('test.echo', { text: 'served' })).result, { echoed: 'served' });
  } finally {
    socket.destroy();
    other.close();
  }
});

test("a stopped backend's token stops working and its connections close; a restart gets a new token", async () => {
  const backend = hops.sb.gateway.backends.get('t')!;
  const first = readFileSync(join(hops.dir, 't.token'), 'utf8');
  const open = await Raw.as(path, first);
  await backend.stop();
  await until(async () => (open.socket.destroyed ? true : undefined), 'the connection made with it to close');
  assert.deepEqual(await refusedAfter(auth({ token: first })), [
    { jsonrpc: '2.0', id: 1, error: AUTH_FAILED },
  ]);
  await backend.start();
  const second = readFileSync(join(hops.dir, 't.token'), 'utf8');
  tokens.push(second);
  assert.notEqual(second, first);
  assert.deepEqual(await refusedAfter(auth({ token: first })), [
    { jsonrpc: '2.0', id: 1, error: AUTH_FAILED },
  ]);
  const again = await Raw.as(path, second);
  assert.deepEqual((await again.request('ping')).result, {});
  again.close();
});

test('no bridge token appears in the log, the catalog, or any answer', async () => {
  const catalog = JSON.stringify(await hops.host.listTools());
  const remote = await Raw.as(path, REMOTE_TOKEN);
  const bridged = JSON.stringify(await remote.request('tools/list'));
  remote.close();
  const log = hops.log();
  const answers = Buffer.concat(received).toString();
  assert.ok(log.length > 0 && answers.length > 0);
  for (const token of tokens) {
    for (const [where, text] of Object.entries({ log, catalog, bridged, answers })) {
      assert.ok(!text.includes(token), `a bridge token appears in ${where}`);
    }
  }
});
