// A remote A2A agent (the SDK's own server, over real HTTP) as a backend: its skills are tools an
// MCP host lists and calls, its input-required becomes the host's elicitation, its failures are
// tool errors, and policy and audit apply as to any backend.
import assert from 'node:assert/strict';
import test, { type TestContext } from 'node:test';
import { startAgent } from '../fixtures/a2a-agent.js';
import { probe } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { queryAudit } from '../../src/trust/audit-read.js';
import { tempDbPath } from '../trust/helpers.js';
import { until } from '../support/poll.js';

type Content = { type: string; text?: string }[];

for (const streaming of [true, false]) {
  test(`skills become tools; a call is a message and its artifact the result (streaming: ${streaming})`, async (t) => {
    const agent = await startAgent({ streaming });
    t.after(() => agent.close());
    const sb = await startGateway(t, {
      servers: { helper: { a2a: agent.url, headers: { authorization: 'Bearer agent-key' } } },
    });
    const { client } = await connectHttp(t, httpUrl(sb));
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((x) => x.name).sort(), ['ask', 'fail', 'greet', 'late', 'linger', 'sum']);
    const greet = tools.find((x) => x.name === 'greet')!;
    assert.deepEqual(greet.inputSchema.required, ['message']);
    assert.match(greet.description!, /Examples: \{"message":"Ada"\}/);
    const result = await client.callTool({ name: 'greet', arguments: { message: 'Ada', data: { n: 1 } } });
    assert.equal((result.content as Content)[0]!.text, 'Hello Ada');
    assert.deepEqual(result.structuredContent, { greeted: 'Ada' });
    assert.deepEqual(agent.seen.messages.at(-1), {
      text: 'Ada',
      texts: ['Ada'],
      data: [{ n: 1 }],
      metadata: { skill: 'greet' },
    });
    assert.ok(agent.authorizations.every((a) => a === 'Bearer agent-key'));
    const failed = await client.callTool({ name: 'fail', arguments: { message: 'x' } });
    assert.equal(failed.isError, true);
    assert.match((failed.content as Content)[0]!.text!, /failed: cannot do that/);
  });
}

test('a data-only skill is a tool of its data: called with data alone, no text is sent; message still works', async (t) => {
  const agent = await startAgent();
  t.after(() => agent.close());
  const sb = await startGateway(t, { servers: { helper: { a2a: agent.url } } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const sum = (await client.listTools()).tools.find((x) => x.name === 'sum')!;
  assert.deepEqual(sum.inputSchema.required, ['data']);
  assert.ok(sum.inputSchema.properties?.message, 'message is still accepted');
  assert.match(sum.description!, /Examples: \{"data":\{"numbers":\[1,2\]\}\}/);

  const result = await client.callTool({ name: 'sum', arguments: { data: { numbers: [1, 2, 3] } } });
  assert.equal((result.content as Content)[0]!.text, 'sum 6');
  assert.deepEqual(result.structuredContent, { total: 6 });
  assert.deepEqual(agent.seen.messages.at(-1), {
    text: '',
    texts: [],
    data: [{ numbers: [1, 2, 3] }],
    metadata: { skill: 'sum' },
  });

  // A caller that still sends message (as every A2A tool once required) is served as before.
  const old = await client.callTool({ name: 'sum', arguments: { message: 'add', data: { numbers: [4] } } });
  assert.equal((old.content as Content)[0]!.text, 'sum 4');
  assert.deepEqual(agent.seen.messages.at(-1)!.texts, ['add']);
  assert.deepEqual(agent.seen.messages.at(-1)!.data, [{ numbers: [4] }]);
});

test("another switchboard's agent: its tools come back with their own input schemas, called with their arguments as data", async (t) => {
  const serving = await startGateway(t, { servers: { p: probe('p') }, a2a: { serve: { enabled: true } } });
  const sb = await startGateway(t, { servers: { peer: { a2a: new URL(serving.http!.url).origin } } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const { tools } = await client.listTools();
  const progress = tools.find((x) => x.name === 'progress')!;
  const data = progress.inputSchema.properties?.data as { properties?: object; required?: string[] };
  assert.deepEqual(progress.inputSchema.required, ['data']);
  assert.ok(data.properties && 'steps' in data.properties, JSON.stringify(data));
  assert.deepEqual(data.required, ['steps']);
  const echo = tools.find((x) => x.name === 'echo')!;
  assert.match(echo.description!, /Examples: \{"data":\{\}\}/);
  const result = await client.callTool({ name: 'echo', arguments: { data: { said: 'through two' } } });
  const echoed = JSON.parse((result.content as Content)[0]!.text!) as { arguments: unknown };
  assert.deepEqual(echoed.arguments, { said: 'through two' });
});

test("a host cancelling a call cancels the agent's task, even before the call's first answer", async (t) => {
  const agent = await startAgent();
  t.after(() => agent.close());
  const sb = await startGateway(t, { servers: { helper: { a2a: agent.url } } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const abort = new AbortController();
  const call = client.callTool(
    { name: 'linger', arguments: { message: 'x' } },
    {
      signal: abort.signal,
      // The agent's 'working' status reaches the host as progress: the task is under way there.
      onprogress: () => abort.abort(),
    },
  );
  await assert.rejects(call);
  await until(() => agent.seen.cancelled[0], 'the agent to be asked to cancel its task');
  assert.equal(agent.seen.cancelled.length, 1);
});

test('an agent that does not stream: its working status is progress, and a cancel reaches its task', async (t) => {
  const agent = await startAgent({ streaming: false });
  t.after(() => agent.close());
  const sb = await startGateway(t, { servers: { helper: { a2a: agent.url } } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const abort = new AbortController();
  const progress: string[] = [];
  const call = client.callTool(
    { name: 'linger', arguments: { message: 'x' } },
    { signal: abort.signal, onprogress: (p) => void progress.push(String(p.message)) },
  );
  await until(() => (progress.includes('lingering') ? true : undefined), 'the working status as progress');
  abort.abort();
  await assert.rejects(call);
  await until(() => agent.seen.cancelled[0], 'the agent to be asked to cancel its task');
  assert.equal(agent.seen.cancelled.length, 1);
});

test('an agent that answers only after the host cancelled: the host is not kept waiting, and the task is cancelled once the answer names it', async (t) => {
  const agent = await startAgent({ streaming: false });
  t.after(() => agent.close());
  const sb = await startGateway(t, { servers: { helper: { a2a: agent.url } } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const abort = new AbortController();
  const call = client.callTool({ name: 'late', arguments: { message: 'x' } }, { signal: abort.signal });
  await until(
    () => agent.seen.messages.find((m) => (m.metadata as { skill?: string }).skill === 'late'),
    'the message to reach the agent',
  );
  abort.abort();
  await assert.rejects(call);
  assert.deepEqual(agent.seen.cancelled, [], 'no task to cancel yet: the agent has not answered');
  agent.release();
  await until(() => agent.seen.cancelled[0], 'the task of the late answer to be cancelled');
  assert.equal(agent.seen.cancelled.length, 1);
});

test('an agent lost mid-call fails the call naming it, as a backend that is unavailable', async (t) => {
  const agent = await startAgent();
  const sb = await startGateway(t, { servers: { helper: { a2a: agent.url } } });
  const { client } = await connectHttp(t, httpUrl(sb));
  let lost: Promise<void> | undefined;
  const call = client.callTool(
    { name: 'linger', arguments: { message: 'x' } },
    { onprogress: () => void (lost ??= agent.close()) },
  );
  const err = await call.then(
    () => assert.fail('the call answered'),
    (e: { code?: number; message: string }) => e,
  );
  await lost;
  assert.equal(err.code, -32001);
  assert.match(err.message, /A2A agent helper failed/);
});

test("the agent's input-required is the host's elicitation; the answer goes back as the next message", async (t) => {
  const agent = await startAgent();
  t.after(() => agent.close());
  const path = await tempDbPath(t);
  const sb = await startGateway(t, { servers: { helper: { a2a: agent.url } }, audit: { path } });
  const asked: Record<string, unknown>[] = [];
  const { client } = await connectHttp(t, httpUrl(sb), {
    capabilities: { elicitation: { form: {} } },
    setup: (c) =>
      c.setRequestHandler('elicitation/create', (req) => {
        asked.push(req.params as Record<string, unknown>);
        return Promise.resolve({ action: 'accept', content: { answer: 'Grace' } });
      }),
  });
  const result = await client.callTool({ name: 'ask', arguments: { message: 'hi' } });
  assert.equal(asked.length, 1);
  assert.equal(asked[0]!.message, 'What is your name?');
  assert.equal((result.content as Content)[0]!.text, 'Hello Grace');
  assert.equal(agent.seen.messages.at(-1)!.text, 'Grace');
  sb.flushAudit();
  const db = openTrustDb(path);
  t.after(() => db.close());
  const question = queryAudit(db, { method: 'elicitation/create' })[0];
  assert.equal(question?.callerKind, 'backend');
  assert.equal(question?.callerId, 'helper');
});

test('a host declining the question ends the call as a tool error; policy can deny a skill like any tool', async (t) => {
  const agent = await startAgent();
  t.after(() => agent.close());
  const sb = await startGateway(t, {
    servers: { helper: { a2a: agent.url } },
    policy: { rules: [{ name: 'no-fail', backends: ['helper'], tools: ['fail'], effect: 'deny' }] },
  });
  const { client } = await connectHttp(t, httpUrl(sb), {
    capabilities: { elicitation: { form: {} } },
    setup: (c) => c.setRequestHandler('elicitation/create', () => Promise.resolve({ action: 'decline' })),
  });
  const { tools } = await client.listTools();
  assert.ok(!tools.some((x) => x.name === 'fail'));
  await assert.rejects(client.callTool({ name: 'fail', arguments: { message: 'x' } }), /fail/);
  const declined = await client.callTool({ name: 'ask', arguments: { message: 'hi' } });
  assert.equal(declined.isError, true);
  assert.match((declined.content as Content)[0]!.text!, /decline/);
});

test('a large message argument (crossing switchboard as bytes) reaches the agent as its text', async (t) => {
  const agent = await startAgent();
  t.after(() => agent.close());
  const sb = await startGateway(t, { servers: { helper: { a2a: agent.url } } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const name = `${'Ada "the first" é '.repeat(5000)}!`;
  const result = await client.callTool({ name: 'greet', arguments: { message: name } });
  assert.equal((result.content as Content)[0]!.text, `Hello ${name}`);
  assert.equal(agent.seen.messages.at(-1)?.text, name);
});

const limit = 64 * 1024;

/** A host's client to switchboard fronting the test agent, with a 64 KiB message limit. */
async function limitedAgent(t: TestContext, streaming: boolean) {
  const agent = await startAgent({ streaming });
  t.after(() => agent.close());
  const sb = await startGateway(t, {
    servers: { helper: { a2a: agent.url } },
    limits: { maxMessageBytes: limit },
  });
  return (await connectHttp(t, httpUrl(sb))).client;
}

for (const streaming of [true, false]) {
  test(`an agent's answer over limits.maxMessageBytes fails only its call, naming the limit (streaming: ${streaming})`, async (t) => {
    const client = await limitedAgent(t, streaming);
    // The agent names it twice in its artifact (as text and as data): its answer is over the limit.
    const name = 'n'.repeat(40 * 1024);
    const err = await client.callTool({ name: 'greet', arguments: { message: name } }).then(
      () => assert.fail('the call answered'),
      (e: { code?: number; message: string }) => e,
    );
    // As any failure of the agent's: -32001, naming it, and here the sizes.
    assert.equal(err.code, -32001);
    assert.match(
      err.message,
      new RegExp(`A2A agent helper failed: .* over the message limit of ${limit} bytes`),
    );
    const small = await client.callTool({ name: 'greet', arguments: { message: 'Ada' } });
    assert.equal((small.content as Content)[0]!.text, 'Hello Ada');
  });
}

test('what one task streams adds up to no more than the limit: many artifacts each within it fail the call', async (t) => {
  const client = await limitedAgent(t, true);
  // 40 artifacts of ~8 KiB each: every update within the limit, their sum five times over it.
  const err = await client
    .callTool({ name: 'greet', arguments: { message: 'g'.repeat(4000), data: { artifacts: 40 } } })
    .then(
      () => assert.fail('the call answered'),
      (e: { code?: number; message: string }) => e,
    );
  assert.equal(err.code, -32001);
  assert.match(err.message, new RegExp(`artifacts of more than ${limit} bytes for one task`));
  const few = await client.callTool({ name: 'greet', arguments: { message: 'Ada', data: { artifacts: 3 } } });
  assert.equal((few.content as Content).filter((c) => c.text === 'Hello Ada').length, 3);
});
