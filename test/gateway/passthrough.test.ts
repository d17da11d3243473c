// What a proxy must not touch: unknown fields and _meta keys both ways; plus merged instructions and routed completion.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { probe, rawOpen, rawPost, rawSession, responseTo, textJson } from './harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

test('unknown params fields and _meta keys reach the backend untouched', async (t) => {
  const sb = await startGateway(t, { servers: { a: probe('a'), b: probe('b') } });
  const url = httpUrl(sb);
  const session = await rawSession(url);
  const params = {
    name: 'b_echo',
    arguments: { text: 'hi', nested: { list: [1, { deep: null }], flag: false } },
    _meta: { 'io.example/trace': 'abc', 'x-custom': { k: [1, 2] } },
    'x-unknown-field': { kept: 'as is' },
  };
  const res = await rawPost(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }), {
    'mcp-session-id': session,
  });
  const result = responseTo(res.messages, 1).result as Record<string, unknown>;
  const seen = (result.structuredContent as { params: { _meta: Record<string, unknown> } }).params;
  // Switchboard may add keys of its own namespace (the bridge's call chain); nothing else changes.
  const ours = Object.keys(seen._meta).filter((k) => k.startsWith('io.switchboard/'));
  for (const k of ours) delete seen._meta[k];
  assert.deepEqual(seen, { ...params, name: 'echo' }, 'only the name is rewritten');
  assert.deepEqual(result._meta, { 'probe/answered-by': 'b', 'x-unknown-result-meta': { kept: true } });
});

test('a backend’s request to the host and the host’s answer pass with their unknown fields', async (t) => {
  const sb = await startGateway(t, {
    servers: { a: { ...probe('a'), args: [...probe('a').args, '--raw-answers'] }, b: probe('b') },
  });
  const url = httpUrl(sb);
  const session = await rawSession(url, { sampling: {} });
  const headers = { 'mcp-session-id': session };
  const call = {
    jsonrpc: '2.0',
    id: 9,
    method: 'tools/call',
    params: { name: 'a_sample', arguments: { prompt: 'p' } },
  };
  const stream = await rawOpen(url, JSON.stringify(call), headers);
  const asked = await stream.inbox.next((m) => m.method === 'sampling/createMessage');
  assert.deepEqual(asked.params, {
    messages: [{ role: 'user', content: { type: 'text', text: 'p' } }],
    maxTokens: 50,
    'x-probe-field': { from: 'a' },
    _meta: { 'x-probe-meta': 'a' },
  });
  const answer = {
    role: 'assistant',
    model: 'raw-host',
    content: { type: 'text', text: 'answer' },
    'x-host-field': [1, 2, 3],
    _meta: { 'x-host-meta': { ok: true } },
  };
  const posted = await rawPost(
    url,
    JSON.stringify({ jsonrpc: '2.0', id: asked.id, result: answer }),
    headers,
  );
  assert.equal(posted.status, 202);
  const done = await stream.inbox.next((m) => m.id === 9);
  assert.deepEqual(textJson(done.result), { server: 'a', answer: 'answer', model: 'raw-host', raw: answer });
});

test('hosts see every backend’s instructions, each under its name', async (t) => {
  const sb = await startGateway(t, {
    servers: {
      a: probe('a'),
      b: probe('b'),
      quiet: { ...probe('quiet'), args: [...probe('quiet').args, '--no-instructions'] },
    },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const text = client.getInstructions() ?? '';
  assert.match(text, /## a\n\nProbe a: call echo to see what arrived\./);
  assert.match(text, /## b\n\nProbe b: call echo to see what arrived\./);
  assert.doesNotMatch(text, /## quiet/);
});

test('completion goes to the backend that owns the prompt or the template', async (t) => {
  const sb = await startGateway(t, { servers: { a: probe('a'), b: probe('b') } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const prompt = await client.complete({
    ref: { type: 'ref/prompt', name: 'b_greet' },
    argument: { name: 'who', value: 'A' },
  });
  assert.deepEqual(prompt.completion.values, ['Ada (b)', 'Alan (b)']);
  const template = await client.complete({
    ref: { type: 'ref/resource', uri: 'a+probe://a/items/{id}' },
    argument: { name: 'id', value: 'g' },
  });
  assert.deepEqual(template.completion.values, ['a-gamma']);
  await assert.rejects(
    client.complete({
      ref: { type: 'ref/prompt', name: 'nobody_greet' },
      argument: { name: 'who', value: '' },
    }),
    /Unknown prompt: nobody_greet/,
  );
});
