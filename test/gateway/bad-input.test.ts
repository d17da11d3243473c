// Bad input from a host gets the right JSON-RPC error (and HTTP status), and switchboard keeps serving everyone.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  initialize,
  PROBE,
  probe,
  rawOpen,
  rawPost,
  rawSession,
  rawStdio,
  readMessages,
  responseTo,
  textJson,
} from './harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { captureLog } from '../support/log-capture.js';
import { eventually } from '../support/poll.js';
import { faulty } from '../faults/helpers.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const LIMIT = 8192;
const SERVERS = { a: probe('a'), b: probe('b') };

const req = (id: number | string, method: string, params?: object) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
const errorOf = (m: Record<string, unknown>) => m.error as { code: number; message: string };

test("a stdio host's answer over the limit fails the request it answered, and the call that asked goes on", async (t) => {
  const { write, inbox } = await rawStdio(t, { servers: SERVERS, limits: { maxMessageBytes: LIMIT } });
  write(initialize({ sampling: {} }));
  await inbox.next((m) => m.id === 'init');
  write(req(1, 'tools/call', { name: 'a_sample', arguments: { prompt: 'p' } }));
  const ask = await inbox.next((m) => m.method === 'sampling/createMessage');
  // Its id first, its result after: the ends of the dropped line show an answer to that request.
  const content = { type: 'text', text: 'w'.repeat(LIMIT) };
  write(JSON.stringify({ jsonrpc: '2.0', id: ask.id, result: { role: 'assistant', content, model: 'm' } }));
  const answer = await inbox.next((m) => m.id === 1);
  assert.match(
    JSON.stringify(answer),
    /the host answered with \d+ bytes, over the message limit of 8192 bytes \(limits\.maxMessageBytes\); the answer was dropped/,
  );
  assert.ok(!inbox.items.some((m) => m.id === null), 'nothing answered to id null');
  write(req(2, 'tools/call', { name: 'b_echo', arguments: { still: 'here' } }));
  assert.deepEqual(textJson((await inbox.next((m) => m.id === 2)).result).arguments, { still: 'here' });
});

test("a stdio host's request over the limit whose method neither end shows is still answered to its id", async (t) => {
  const { write, inbox } = await rawStdio(t, { servers: SERVERS, limits: { maxMessageBytes: LIMIT } });
  write(initialize({ sampling: {} }));
  await inbox.next((m) => m.id === 'init');
  // A request of switchboard's to the host waits under its own id, so the host's id 1 is no answer.
  write(req(1, 'tools/call', { name: 'a_sample', arguments: { prompt: 'p' } }));
  const ask = await inbox.next((m) => m.method === 'sampling/createMessage');
  // `method` between two large values: the line's ends show its id, and not what it is.
  const big = 'v'.repeat(LIMIT);
  const id = typeof ask.id === 'number' ? ask.id + 1000 : 'host-7';
  write(JSON.stringify({ jsonrpc: '2.0', id, params: { big }, method: 'tools/call', x: { big } }));
  const refused = await inbox.next((m) => m.id === id);
  assert.equal(errorOf(refused).code, -32600);
  assert.match(errorOf(refused).message, new RegExp(`exceeds the limit of ${LIMIT} bytes`));
  // The request switchboard waits on is untouched: the host's answer still settles it.
  const result = { role: 'assistant', content: { type: 'text', text: 'fine' }, model: 'm' };
  write(JSON.stringify({ jsonrpc: '2.0', id: ask.id, result }));
  assert.match(JSON.stringify((await inbox.next((m) => m.id === 1)).result), /fine/);
});

test('bad input over stdio is answered with the right error and the session goes on', async (t) => {
  const { write, inbox } = await rawStdio(t, { servers: SERVERS, limits: { maxMessageBytes: LIMIT } });
  write(initialize());
  await inbox.next((m) => m.id === 'init');
  const next = async () => {
    const seen = inbox.items.length;
    return inbox.next(() => inbox.items.length > seen).then(() => inbox.items.at(-1)!);
  };

  let got = next();
  write('{"jsonrpc":"2.0","id":1,"method":');
  assert.deepEqual(await got, {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32700, message: 'Parse error: not valid JSON' },
  });
  got = next();
  write('42');
  assert.equal(errorOf(await got).code, -32600);
  got = next();
  write(`[${req(2, 'ping')}]`);
  assert.match(errorOf(await got).message, /batch/i);
  assert.equal(errorOf(inbox.items.at(-1)!).code, -32600);
  got = next();
  write(req(3, 'tools/explode'));
  assert.deepEqual(await got, {
    jsonrpc: '2.0',
    id: 3,
    error: { code: -32601, message: 'Method not found: tools/explode' },
  });
  got = next();
  write(req(4, 'tools/call', { name: 'a_echo', arguments: { text: 'x'.repeat(LIMIT) } }));
  const big = await got;
  assert.equal(big.id, 4, 'answered to its id, read from the line kept of its ends');
  assert.equal(errorOf(big).code, -32600);
  assert.match(errorOf(big).message, new RegExp(`exceeds the limit of ${LIMIT} bytes`));
  got = next();
  write(req(5, 'tools/call', { name: 'nobody_echo', arguments: {} }));
  assert.deepEqual(await got, {
    jsonrpc: '2.0',
    id: 5,
    error: { code: -32602, message: 'Unknown tool: nobody_echo' },
  });

  write(req(6, 'tools/call', { name: 'b_echo', arguments: { still: 'here' } }));
  const fine = await inbox.next((m) => m.id === 6);
  assert.deepEqual(textJson(fine.result).arguments, { still: 'here' });
});

test('bad input over HTTP gets the right status and error and other hosts are still served', async (t) => {
  const sb = await startGateway(t, { servers: SERVERS, limits: { maxMessageBytes: LIMIT } });
  const url = httpUrl(sb);
  const session = await rawSession(url);
  const headers = { 'mcp-session-id': session };

  const malformed = await rawPost(url, '{"jsonrpc":"2.0","id":1,', headers);
  assert.equal(malformed.status, 400);
  assert.equal(errorOf(malformed.messages[0]!).code, -32700);

  const scalar = await rawPost(url, '42', headers);
  assert.equal(scalar.status, 400);
  assert.equal(errorOf(scalar.messages[0]!).code, -32600);

  const batch = await rawPost(url, `[${req(2, 'ping')}]`, headers);
  assert.equal(batch.status, 400);
  assert.equal(errorOf(batch.messages[0]!).code, -32600);
  assert.match(errorOf(batch.messages[0]!).message, /batch/i);

  const unknownMethod = await rawPost(url, req(3, 'tools/explode'), headers);
  assert.equal(unknownMethod.status, 200);
  assert.equal(errorOf(responseTo(unknownMethod.messages, 3)).code, -32601);

  const unknownTool = await rawPost(
    url,
    req(4, 'tools/call', { name: 'nobody_echo', arguments: {} }),
    headers,
  );
  assert.equal(errorOf(responseTo(unknownTool.messages, 4)).code, -32602);

  const oversized = req(5, 'tools/call', { name: 'a_echo', arguments: { text: 'x'.repeat(LIMIT) } });
  const declared = await rawPost(url, oversized, headers);
  assert.equal(declared.status, 413);
  assert.match(errorOf(declared.messages[0]!).message, new RegExp(`limit of ${LIMIT} bytes`));
  // Without a Content-Length the limit is enforced while reading.
  const streamed = await fetch(url, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...headers,
    },
    body: new Blob([oversized]).stream(),
    duplex: 'half',
  } as RequestInit);
  assert.equal(streamed.status, 413);
  await streamed.body?.cancel();

  const again = await rawPost(
    url,
    req(6, 'tools/call', { name: 'a_echo', arguments: { ok: true } }),
    headers,
  );
  assert.deepEqual(textJson(responseTo(again.messages, 6).result).arguments, { ok: true });
  const { client } = await connectHttp(t, url);
  assert.equal(textJson(await client.callTool({ name: 'b_echo', arguments: {} })).server, 'b');
});

test('a legacy request reusing the id of one under way is refused, and the first still gets its answer', async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty() }, namespacing: { mode: 'always' } });
  const url = httpUrl(sb);
  const headers = { 'mcp-session-id': await rawSession(url) };
  const slow = rawOpen(
    url,
    req(7, 'tools/call', { name: 'f_slow', arguments: { steps: 3, everyMs: 200 } }),
    headers,
  );
  const first = await slow;
  const duplicate = await rawPost(url, req(7, 'ping'), headers);
  assert.equal(errorOf(responseTo(duplicate.messages, 7)).code, -32600);
  assert.match(errorOf(responseTo(duplicate.messages, 7)).message, /Request id 7 is already in use/);
  await first.ended;
  assert.equal(textJson(responseTo(first.inbox.items, 7).result).steps, 3, 'the call under way was answered');
  // Once answered, the id is free again.
  const after = await rawPost(url, req(7, 'ping'), headers);
  assert.deepEqual(responseTo(after.messages, 7).result, {});
});

test('a host that closes its connection mid-body is no error of switchboard: a debug line, and others are served', async (t) => {
  const log = captureLog('debug');
  const sb = await startGateway(t, { servers: SERVERS }, { log: log.logger });
  const url = new URL(httpUrl(sb));
  const socket = connect(Number(url.port), url.hostname);
  await once(socket, 'connect');
  socket.write(
    `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\ncontent-type: application/json\r\n` +
      'accept: application/json, text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{"jso\r\n',
  );
  // Time for the request's headers to be read (what follows holds whenever the cut comes).
  await new Promise((resolve) => setTimeout(resolve, 300));
  socket.destroy();
  await eventually('the cut to be logged', () =>
    log.lines().some((l) => l.msg === 'a host closed its connection mid-request'),
  );
  assert.ok(!log.lines().some((l) => l.msg === 'http front error'), log.text());
  const { client } = await connectHttp(t, httpUrl(sb));
  assert.equal(textJson(await client.callTool({ name: 'a_echo', arguments: {} })).server, 'a');
});

test('requests without a session, or with an unknown one, are refused with 400 and 404', async (t) => {
  const sb = await startGateway(t, { servers: SERVERS });
  const url = httpUrl(sb);
  const missing = await rawPost(url, req(1, 'tools/list'));
  assert.equal(missing.status, 400);
  assert.match(errorOf(missing.messages[0]!).message, /Mcp-Session-Id/);
  const unknown = await rawPost(url, req(1, 'tools/list'), { 'mcp-session-id': 'no-such-session' });
  assert.equal(unknown.status, 404);
  const get = await fetch(url, {
    headers: { accept: 'text/event-stream', 'mcp-session-id': 'no-such-session' },
  });
  assert.equal(get.status, 404);
  await get.body?.cancel();
  const session = await rawSession(url);
  const closed = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session } });
  assert.equal(closed.status, 200);
  assert.equal((await rawPost(url, req(2, 'tools/list'), { 'mcp-session-id': session })).status, 404);
});

/** A POST with the Host and Origin given (fetch will not let a caller set Host). */
function postWith(url: string, host: string, origin?: string): Promise<number> {
  const body = initialize();
  return new Promise((resolve, reject) => {
    const r = request(
      url,
      {
        method: 'POST',
        headers: {
          host,
          ...(origin ? { origin } : {}),
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    r.on('error', reject);
    r.end(body);
  });
}

test('a foreign Host or Origin is refused with 403', async (t) => {
  const sb = await startGateway(t, { servers: SERVERS });
  const url = httpUrl(sb);
  const port = new URL(url).port;
  assert.equal(await postWith(url, `evil.example:${port}`), 403);
  assert.equal(await postWith(url, `localhost:${port}`, 'https://evil.example'), 403);
  assert.equal(await postWith(url, `localhost:${port}`, `http://localhost:5173`), 200);
  assert.equal(await postWith(url, `127.0.0.1:${port}`), 200);
});

test('the switchboard command on stdio answers malformed input and keeps serving', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-stdio-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, 'switchboard.yaml');
  await writeFile(
    config,
    [
      'servers:',
      '  a:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(PROBE)}, --name, a]`,
    ].join('\n'),
  );
  const child = spawn(process.execPath, [CLI, 'up', '--stdio', '--config', config, '--log-level', 'silent'], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill();
  });
  const inbox = readMessages(child.stdout);
  child.stdin.write(initialize() + '\n');
  await inbox.next((m) => m.id === 'init');
  child.stdin.write('not json at all\n');
  const parseError = await inbox.next((m) => m.id === null);
  assert.equal(errorOf(parseError).code, -32700);
  child.stdin.write(req(1, 'tools/call', { name: 'echo', arguments: { via: 'cli' } }) + '\n');
  const answer = await inbox.next((m) => m.id === 1);
  assert.deepEqual(textJson(answer.result).arguments, { via: 'cli' });
  // Closing stdin is how a host stops it: switchboard and its backends exit.
  child.stdin.end();
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0);
});

test('a numeric id JSON in JavaScript cannot keep exactly is refused; one it can is echoed as sent', async (t) => {
  const { write, inbox } = await rawStdio(t, { servers: SERVERS });
  write(initialize());
  await inbox.next((m) => m.id === 'init');
  // 2^53 + 1 parses as 2^53: echoed, it would not be the host's id, and 2^53 + 2 would read as it too.
  write('{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"a_echo"}}');
  const refused = await inbox.next((m) => m.id === null);
  assert.equal(errorOf(refused).code, -32600);
  assert.match(errorOf(refused).message, /within ±\(2\^53 - 1\).*send it as a string/);
  write('{"jsonrpc":"2.0","id":1e+300,"method":"ping"}');
  await eventually('the second refusal', () => inbox.items.filter((m) => m.id === null).length === 2);
  // The largest exact integer and a fraction are ids like any other.
  write(req(9007199254740991, 'tools/call', { name: 'a_echo', arguments: { n: 1 } }));
  assert.deepEqual(textJson((await inbox.next((m) => m.id === 9007199254740991)).result).arguments, { n: 1 });
  write(req(0.5, 'ping'));
  assert.deepEqual((await inbox.next((m) => m.id === 0.5)).result, {});
});

test('a cursor of null asks for the first page, with or without paging', async (t) => {
  for (const catalog of [{}, { pageSize: 1 }]) {
    const { write, inbox } = await rawStdio(t, { servers: SERVERS, catalog });
    write(initialize());
    await inbox.next((m) => m.id === 'init');
    write(req('list', 'tools/list', { cursor: null }));
    const answer = await inbox.next((m) => m.id === 'list');
    assert.ok(
      Array.isArray((answer.result as { tools?: unknown[] } | undefined)?.tools),
      JSON.stringify(answer),
    );
  }
});
