// Host sessions sharing a stdio backend that asks questions: per-session instances (configured, or
// chosen once the backend asks), each session's questions reaching that session, the limit, and
// an instance ending with its session.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Inbox, probe, textJson, textOf } from '../gateway/harness.js';
import { connectHttp, connectStdio } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';
import { eventually } from '../support/poll.js';

const ASKS = { sampling: {} };

/** Answers sampling as `who`, once `gate` opens (so both sessions' questions are out at once). */
function answerSampling(who: string, arrived: Inbox<string>, gate: () => Promise<unknown>) {
  return (client: Client) =>
    client.setRequestHandler('sampling/createMessage', async (req) => {
      const content = req.params.messages[0]?.content as { text?: string };
      arrived.push(who);
      await gate();
      return { role: 'assistant', model: who, content: { type: 'text', text: `${who}: ${content.text}` } };
    });
}

const instanceOf = async (client: Client) =>
  textOf(await client.callTool({ name: 'instance', arguments: {} }));
const sample = (client: Client, prompt: string) => client.callTool({ name: 'sample', arguments: { prompt } });

test('per-session: two sessions, two instances, and each question reaches the session it is about', async (t) => {
  const arrived = new Inbox<string>();
  const gate = () => arrived.next(() => arrived.items.length >= 2);
  const { sb, client: stdio } = await connectStdio(
    t,
    { servers: { a: probe('a', { extra: { share: 'per-session' } }) } },
    { capabilities: ASKS, setup: answerSampling('stdio', arrived, gate) },
  );
  const { client: http } = await connectHttp(t, httpUrl(sb), {
    capabilities: ASKS,
    setup: answerSampling('http', arrived, gate),
  });
  // Both calls wait on their questions at once: on one shared stdio instance neither could be told apart.
  const [fromStdio, fromHttp] = await Promise.all([sample(stdio, 'one'), sample(http, 'two')]);
  assert.deepEqual(textJson(fromStdio), { server: 'a', answer: 'stdio: one', model: 'stdio' });
  assert.deepEqual(textJson(fromHttp), { server: 'a', answer: 'http: two', model: 'http' });
  const [one, two] = [await instanceOf(stdio), await instanceOf(http)];
  assert.notEqual(one, two);
  assert.equal(await instanceOf(stdio), one, 'a session keeps its instance');
  assert.equal(sb.gateway.backends.get('a')?.perSessionInstances, 2);
});

test('per-session: an instance stops when its session ends', async (t) => {
  const { sb } = await connectStdio(t, { servers: { a: probe('a', { extra: { share: 'per-session' } }) } });
  const backend = sb.gateway.backends.get('a')!;
  const transport = new StreamableHTTPClientTransport(new URL(httpUrl(sb)));
  const host = new Client({ name: 'leaving-host', version: '1.0.0' });
  await host.connect(transport);
  await instanceOf(host);
  assert.equal(backend.perSessionInstances, 1);
  // DELETE: the host ends its session.
  await transport.terminateSession();
  await host.close();
  await eventually('the closed session’s instance is gone', () => backend.perSessionInstances === 0);
  // The next session starts an instance of its own again.
  const { client } = await connectHttp(t, httpUrl(sb));
  await instanceOf(client);
  assert.equal(backend.perSessionInstances, 1);
});

test('maxInstances: a session beyond the limit is refused, saying why', async (t) => {
  const { sb, client: stdio } = await connectStdio(t, {
    servers: { a: probe('a', { extra: { share: 'per-session', maxInstances: 1 } }) },
  });
  await instanceOf(stdio);
  const { client: http } = await connectHttp(t, httpUrl(sb));
  await assert.rejects(instanceOf(http), /already runs 1 per-session instances \(maxInstances\)/);
  // The shared instance still serves what never asks anything, and the first session keeps its own.
  assert.ok((await http.listTools()).tools.some((tool) => tool.name === 'instance'));
  assert.equal(sb.gateway.backends.get('a')?.perSessionInstances, 1);
});

test('auto: once the shared instance asks a question, sessions that come later get their own', async (t) => {
  const arrived = new Inbox<string>();
  const open = () => Promise.resolve();
  const { sb, client: stdio } = await connectStdio(
    t,
    { servers: { a: probe('a') } },
    { capabilities: ASKS, setup: answerSampling('stdio', arrived, open) },
  );
  const shared = await instanceOf(stdio);
  assert.equal(textJson(await sample(stdio, 'first')).answer, 'stdio: first');
  const gate = () => arrived.next(() => arrived.items.length >= 3);
  const { client: http } = await connectHttp(t, httpUrl(sb), {
    capabilities: ASKS,
    setup: answerSampling('http', arrived, gate),
  });
  const own = await instanceOf(http);
  assert.notEqual(own, shared);
  assert.equal(await instanceOf(stdio), shared, 'a session that was sharing keeps the shared instance');
  const [fromStdio, fromHttp] = await Promise.all([sample(stdio, 'x'), sample(http, 'y')]);
  assert.equal(textJson(fromStdio).model, 'stdio');
  assert.equal(textJson(fromHttp).model, 'http');
  assert.equal(sb.gateway.backends.get('a')?.perSessionInstances, 1);
});

test('shared: every session uses the one instance, whatever it asks', async (t) => {
  const arrived = new Inbox<string>();
  const { sb, client: stdio } = await connectStdio(
    t,
    { servers: { a: probe('a', { extra: { share: 'shared' } }) } },
    { capabilities: ASKS, setup: answerSampling('stdio', arrived, () => Promise.resolve()) },
  );
  assert.equal(textJson(await sample(stdio, 'q')).answer, 'stdio: q');
  const { client: http } = await connectHttp(t, httpUrl(sb));
  assert.equal(await instanceOf(http), await instanceOf(stdio));
  assert.equal(sb.gateway.backends.get('a')?.perSessionInstances, 0);
});
