// Sampling, elicitation and roots asked by a backend reach the host session whose call caused them, and no other.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { Inbox, probe, textJson, textOf } from './harness.js';
import { connectHttp, connectStdio } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';
import { until } from '../support/poll.js';

const ALL = { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } };

/** Answers sampling with `who` and the prompt, once `gate` opens (so requests overlap). */
function answerSampling(client: Client, who: string, arrived: Inbox<string>, gate: () => Promise<unknown>) {
  client.setRequestHandler('sampling/createMessage', async (req, ctx) => {
    const content = req.params.messages[0]?.content as { text?: string };
    arrived.push(`${who}:${String(ctx.mcpReq.id)}:${content.text}`);
    await gate();
    return {
      role: 'assistant',
      model: who,
      content: { type: 'text', text: `${who} answers ${content.text}` },
    };
  });
}

test('sampling goes to the session whose call caused it while two sessions wait at once', async (t) => {
  const arrived = new Inbox<string>();
  const gate = () => arrived.next(() => arrived.items.length >= 2);
  const { sb, client: stdio } = await connectStdio(
    t,
    { servers: { a: probe('a'), b: probe('b') } },
    { capabilities: ALL, setup: (c) => answerSampling(c, 'stdio', arrived, gate) },
  );
  const { client: http } = await connectHttp(t, httpUrl(sb), {
    capabilities: ALL,
    setup: (c) => answerSampling(c, 'http', arrived, gate),
  });
  const [fromHttp, fromStdio] = await Promise.all([
    http.callTool({ name: 'a_sample', arguments: { prompt: 'one' } }),
    stdio.callTool({ name: 'b_sample', arguments: { prompt: 'two' } }),
  ]);
  assert.deepEqual(textJson(fromHttp), { server: 'a', answer: 'http answers one', model: 'http' });
  assert.deepEqual(textJson(fromStdio), { server: 'b', answer: 'stdio answers two', model: 'stdio' });
});

test('requests from two backends to one session get distinct ids and their own answers', async (t) => {
  const arrived = new Inbox<string>();
  const { sb } = await connectStdio(t, { servers: { a: probe('a'), b: probe('b') } });
  const { client } = await connectHttp(t, httpUrl(sb), {
    capabilities: ALL,
    setup: (c) => answerSampling(c, 'host', arrived, () => arrived.next(() => arrived.items.length >= 2)),
  });
  // Each backend numbers its own requests from the same start, so passed through they would collide.
  const [fromA, fromB] = await Promise.all([
    client.callTool({ name: 'a_sample', arguments: { prompt: 'for a' } }),
    client.callTool({ name: 'b_sample', arguments: { prompt: 'for b' } }),
  ]);
  assert.equal(textJson(fromA).answer, 'host answers for a');
  assert.equal(textJson(fromB).answer, 'host answers for b');
  const ids = arrived.items.map((x) => x.split(':')[1]);
  assert.equal(new Set(ids).size, 2, `ids ${ids.join(', ')}`);
});

test('elicitation and roots go to the session whose call caused them', async (t) => {
  const setup = (who: string) => (c: Client) => {
    c.setRequestHandler('elicitation/create', async (req) => ({
      action: 'accept',
      content: { answer: `${who}: ${req.params.message}` },
    }));
    c.setRequestHandler('roots/list', async () => ({ roots: [{ uri: `file:///${who}`, name: who }] }));
  };
  const { sb, client: stdio } = await connectStdio(
    t,
    { servers: { a: probe('a'), b: probe('b') } },
    { capabilities: ALL, setup: setup('stdio') },
  );
  const { client: http } = await connectHttp(t, httpUrl(sb), { capabilities: ALL, setup: setup('http') });
  const [e1, e2, r1, r2] = await Promise.all([
    http.callTool({ name: 'a_elicit', arguments: { message: 'name?' } }),
    stdio.callTool({ name: 'b_elicit', arguments: { message: 'age?' } }),
    http.callTool({ name: 'a_roots', arguments: {} }),
    stdio.callTool({ name: 'b_roots', arguments: {} }),
  ]);
  assert.deepEqual(textJson(e1), { server: 'a', action: 'accept', content: { answer: 'http: name?' } });
  assert.deepEqual(textJson(e2), { server: 'b', action: 'accept', content: { answer: 'stdio: age?' } });
  assert.deepEqual(textJson(r1), { server: 'a', roots: [{ uri: 'file:///http', name: 'http' }] });
  assert.deepEqual(textJson(r2), { server: 'b', roots: [{ uri: 'file:///stdio', name: 'stdio' }] });
});

test('a host that did not declare sampling is not asked, and the backend is told why', async (t) => {
  const { sb } = await connectStdio(t, { servers: { a: probe('a') } });
  const { client } = await connectHttp(t, httpUrl(sb), { capabilities: {} });
  const result = await client.callTool({ name: 'sample', arguments: { prompt: 'x' } });
  assert.equal(result.isError, true);
  assert.match(textOf(result), /does not support sampling/);
});

test('a request no one session can own is refused, never sent to a session that did not cause it', async (t) => {
  const asked = new Inbox<string>();
  const setup = (who: string) => (c: Client) =>
    c.setRequestHandler('sampling/createMessage', async () => {
      asked.push(who);
      return { role: 'assistant', model: who, content: { type: 'text', text: who } };
    });
  const { sb, client: stdio } = await connectStdio(
    t,
    { servers: { a: probe('a') } },
    { capabilities: ALL, setup: setup('stdio') },
  );
  const { client: http } = await connectHttp(t, httpUrl(sb), { capabilities: ALL, setup: setup('http') });
  // Both sessions have calls waiting on the same stdio backend: its request carries nothing that
  // says which call it is for.
  const waiting = new Inbox<string>();
  const stop = new AbortController();
  const held = http.callTool(
    { name: 'wait', arguments: {} },
    { signal: stop.signal, onprogress: () => waiting.push('http') },
  );
  await waiting.next();
  const result = await stdio.callTool({ name: 'sample', arguments: { prompt: 'whose?' } });
  assert.equal(result.isError, true);
  assert.match(textOf(result), /cannot tell which host session/);
  assert.deepEqual(asked.items, []);
  stop.abort();
  await assert.rejects(held);
  // With the other call gone the owner is certain again: once switchboard has handled the HTTP
  // host's cancellation, which comes on a request of its own that the client does not wait for.
  const answer = await until(async () => {
    const mine = await stdio.callTool({ name: 'sample', arguments: { prompt: 'mine' } });
    return mine.isError ? undefined : (textJson(mine) as { answer: string }).answer;
  }, 'the HTTP call to end');
  assert.equal(answer, 'stdio');
  assert.deepEqual(asked.items, ['stdio']);
});
