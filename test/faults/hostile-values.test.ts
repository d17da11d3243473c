// A peer sends a value where a string belongs, one that cannot even be printed: JSON's
// {"toString": 1} makes String(value) throw. Read in a connection's callback, one such message
// used to end the whole process. Each case here is sent by a backend or a bridge peer, and after
// it switchboard still serves a well-behaved backend beside it. With tracing on, the same goes for
// what the span of a call reads (its request id, its trace state).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { captureLog } from '../support/log-capture.js';
import { eventually } from '../support/poll.js';
import { morphing, listed } from '../security/pinning-helpers.js';
import { RawBridge, newToken, remoteCaller } from '../security/helpers.js';
import { probe, rawPost, rawSession } from '../gateway/harness.js';
import { connect, faulty } from './helpers.js';
import { startOtlpReceiver } from '../support/otlp-receiver.js';

/** A value String() throws on, as JSON carries it. */
const UNPRINTABLE = JSON.parse('{"toString":1}') as unknown;

async function stillServes(client: Awaited<ReturnType<typeof connect>>): Promise<void> {
  const answer = await client.callTool({ name: 'p_echo', arguments: { text: 'still here' } });
  assert.match(JSON.stringify(answer), /still here/);
}

test('list items named by a value that is not a string are left out; the rest are served', async (t) => {
  const log = captureLog('warn');
  const sb = await startGateway(
    t,
    {
      servers: {
        m: morphing({
          tools: [
            { name: UNPRINTABLE, inputSchema: { type: 'object' } },
            { name: 'fine', inputSchema: { type: 'object' } },
          ],
          templates: [
            { uriTemplate: UNPRINTABLE, name: 'bad' },
            { uriTemplate: 'ok://{id}', name: 'ok' },
          ],
        }),
        p: probe('p'),
      },
    },
    { log: log.logger },
  );
  const client = await connect(t, sb);
  await eventually('both backends are listed', () => listed(sb, 'tools').includes('p_echo'));
  assert.deepEqual(
    listed(sb, 'tools').filter((n) => n.startsWith('m_')),
    ['m_fine', 'm_morph'],
  );
  assert.deepEqual(
    listed(sb, 'resourceTemplates').filter((u) => u.startsWith('m+')),
    ['m+ok://{id}'],
  );
  assert.ok(log.lines().some((l) => /list items without a string name were left out/.test(String(l.msg))));
  await stillServes(client);
});

test('notifications and an error answer carrying such values are survived', async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty(), p: probe('p') } });
  const client = await connect(t, sb);
  for (const notification of [
    { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: UNPRINTABLE } },
    { jsonrpc: '2.0', method: 'notifications/elicitation/complete', params: { elicitationId: UNPRINTABLE } },
  ]) {
    await client.callTool({ name: 'f_notify', arguments: { notification } });
    await stillServes(client);
  }
  // The call the malformed answer belongs to fails at once, saying what came.
  await assert.rejects(
    client.callTool({ name: 'f_reject', arguments: { error: { code: -32000, message: UNPRINTABLE } } }),
    /malformed error answer/,
  );
  await stillServes(client);
});

test('a bridge peer cancelling with such a reason is survived', async (t) => {
  const token = newToken();
  const sb = await startGateway(t, { servers: { p: probe('p'), r: remoteCaller(token, ['p_echo']) } });
  const client = await connect(t, sb);
  const raw = await RawBridge.as(sb.bridgePath!, token);
  t.after(() => raw.close());
  raw.send({
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId: 1, reason: UNPRINTABLE },
  });
  // The same connection still answers, and so does everything else.
  const answer = await raw.request('tools/call', { name: 'p_echo', arguments: { text: 'bridge' } });
  assert.equal(answer.error, undefined, JSON.stringify(answer));
  await stillServes(client);
});

test('with tracing on, a request whose id or trace state cannot be read is answered, and nothing ends', async (t) => {
  const token = newToken();
  const receiver = await startOtlpReceiver();
  const sb = await startGateway(t, {
    servers: { p: probe('p'), r: remoteCaller(token, ['p_echo']) },
    tracing: { enabled: true, endpoint: receiver.url },
  });
  // After switchboard's stop (hooks run in order), which sends the last spans here.
  t.after(() => receiver.close());
  const client = await connect(t, sb);
  const raw = await RawBridge.as(sb.bridgePath!, token);
  t.after(() => raw.close());
  // A modern request whose id JSON-RPC does not allow is refused, as the session refuses one.
  const modern = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  raw.send({ jsonrpc: '2.0', id: UNPRINTABLE, method: 'tools/list', params: { _meta: modern } });
  const refused = await raw.next((m) => m.id === null && 'error' in m);
  assert.match(JSON.stringify(refused.error), /id must be a string or a number/);
  // A trace state the propagator cannot join: the call is served, its trace started afresh.
  const answer = await raw.request('tools/call', {
    name: 'p_echo',
    arguments: { text: 'traced' },
    _meta: {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: [UNPRINTABLE],
    },
  });
  assert.equal(answer.error, undefined, JSON.stringify(answer));
  await stillServes(client);
});

test('a message nested deeper than 512 levels is refused, whoever sent it; nothing ends, no backend pays for it', async (t) => {
  // Audit off: with it on, its stage refuses such a call first (test/security/deep-nesting.test.ts).
  const sb = await startGateway(t, { servers: { f: faulty(), p: probe('p') }, audit: { enabled: false } });
  const client = await connect(t, sb);
  // 20,000 levels: 40 KB of brackets, far under the message limit, far past where a walk of the
  // value would exhaust the stack.
  const deep = '['.repeat(20_000) + ']'.repeat(20_000);
  const answered = (result: string) => `{"jsonrpc":"2.0","id":"$id","result":${result}}`;
  // A backend's answer that deep fails its call at once, saying why.
  await assert.rejects(
    client.callTool({ name: 'f_raw', arguments: { lines: [answered(`{"content":[],"x":${deep}}`)] } }),
    /malformed answer: it nests deeper than 512 levels/,
  );
  await stillServes(client);
  // A notification that deep is dropped; the call it came with is answered.
  const log = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":${deep}}}`;
  const r = await client.callTool({ name: 'f_raw', arguments: { lines: [log, answered('{"content":[]}')] } });
  assert.deepEqual(r.content, []);
  await stillServes(client);
  // A host's request that deep is a call the pipeline refuses (audited), and never reaches the
  // backend: encoding it there failed, and counted against the backend's health until it was
  // restarted, by anyone able to make calls.
  const session = await rawSession(httpUrl(sb));
  for (let id = 1; id <= 5; id++) {
    const call = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"f_echo","arguments":{"x":${deep}}}}`;
    const refused = await rawPost(httpUrl(sb), call, { 'mcp-session-id': session });
    assert.match(JSON.stringify(refused.messages), /"code":-32602.*they nest deeper than 512 levels/);
  }
  const { starts } = JSON.parse(
    ((await client.callTool({ name: 'f_state', arguments: {} })).content as { text: string }[])[0]!.text,
  ) as { starts: number };
  assert.equal(starts, 1, 'the backend was never restarted');
  await stillServes(client);
});

test('answers to no request under way are dropped and said so in the log; the call gets its first answer', async (t) => {
  const log = captureLog('debug');
  const sb = await startGateway(t, { servers: { f: faulty(), p: probe('p') } }, { log: log.logger });
  const client = await connect(t, sb);
  const lines = [
    // A backend that could not read something it was sent says so to id null.
    '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error near byte 7"}}',
    '{"jsonrpc":"2.0","id":"$id","result":{"content":[{"type":"text","text":"first"}]}}',
    '{"jsonrpc":"2.0","id":"$id","result":{"content":[{"type":"text","text":"second"}]}}',
    '{"jsonrpc":"2.0","id":"never-sent","result":{}}',
  ];
  const r = await client.callTool({ name: 'f_raw', arguments: { lines } });
  assert.deepEqual(r.content, [{ type: 'text', text: 'first' }]);
  await eventually('both stray answers are logged', () =>
    log.lines().some((l) => l.id === 'never-sent' && l.level === 20),
  );
  const orphan = log.lines().find((l) => /error to no request \(id null\)/.test(String(l.msg)));
  assert.equal(orphan?.level, 40);
  assert.equal(orphan?.message, 'Parse error near byte 7');
  const stray = log.lines().filter((l) => /an answer to no request under way dropped/.test(String(l.msg)));
  assert.equal(stray.length, 2, JSON.stringify(stray));
  await stillServes(client);
});
