// The merged catalog through a real host: namespacing modes, separator, short names, collisions, reversible URIs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StartupError } from '../../src/switchboard.js';
import { MAX_NAME_LENGTH } from '../../src/catalog/naming.js';
import { probe, textJson, textOf } from './harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

async function toolNames(client: Awaited<ReturnType<typeof connectHttp>>['client']): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name).sort();
}

test('conditional namespacing prefixes every backend when there are two and routes by prefix', async (t) => {
  const sb = await startGateway(t, { servers: { a: probe('a'), b: probe('b') } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const names = await toolNames(client);
  assert.ok(names.includes('a_echo') && names.includes('b_echo'), names.join(','));
  assert.ok(!names.includes('echo'));
  const fromB = textJson(await client.callTool({ name: 'b_echo', arguments: { x: 1 } }));
  assert.equal(fromB.server, 'b');
  assert.equal((fromB.params as { name: string }).name, 'echo', 'the backend sees its own tool name');
  const prompts = (await client.listPrompts()).prompts.map((p) => p.name).sort();
  assert.deepEqual(prompts, ['a_greet', 'b_greet']);
});

test('conditional namespacing leaves a lone backend unprefixed', async (t) => {
  const sb = await startGateway(t, { servers: { solo: probe('solo') } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const names = await toolNames(client);
  assert.ok(names.includes('echo'));
  assert.ok(!names.some((n) => n.startsWith('solo_')));
  const resources = (await client.listResources()).resources.map((r) => r.uri);
  assert.deepEqual(resources, ['probe://solo/counter']);
});

test('always namespacing prefixes even a lone backend, with the configured separator', async (t) => {
  const sb = await startGateway(t, {
    servers: { solo: probe('solo') },
    namespacing: { mode: 'always', separator: '.' },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const names = await toolNames(client);
  assert.ok(names.includes('solo.echo'), names.join(','));
  assert.equal(textJson(await client.callTool({ name: 'solo.echo', arguments: {} })).server, 'solo');
});

test('never namespacing keeps names as they are when they do not collide', async (t) => {
  const sb = await startGateway(t, {
    servers: { a: probe('a', { toolPrefix: 'alpha_' }), b: probe('b', { toolPrefix: 'beta_' }) },
    namespacing: { mode: 'never', collisions: 'priority' },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const names = await toolNames(client);
  assert.ok(names.includes('alpha_echo') && names.includes('beta_echo'), names.join(','));
  assert.equal(textJson(await client.callTool({ name: 'beta_echo', arguments: {} })).server, 'b');
});

test('a per-backend prefix replaces the backend name', async (t) => {
  const sb = await startGateway(t, {
    servers: { a: probe('a', { extra: { prefix: 'first' } }), b: probe('b') },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const names = await toolNames(client);
  assert.ok(names.includes('first_echo') && names.includes('b_echo'), names.join(','));
  const uris = (await client.listResources()).resources.map((r) => r.uri).sort();
  assert.deepEqual(uris, ['b+probe://b/counter', 'first+probe://a/counter']);
});

test('names over 64 characters get a stable short form that keeps the tool name and still routes', async (t) => {
  const long = 'p'.repeat(60);
  const sb = await startGateway(t, { servers: { [long]: probe('long'), b: probe('b') } });
  const { client } = await connectHttp(t, httpUrl(sb));
  const names = await toolNames(client);
  const longNames = names.filter((n) => n.startsWith('ppp'));
  for (const n of names) assert.ok(n.length <= MAX_NAME_LENGTH, `${n} is ${n.length} characters`);
  for (const tool of ['echo', 'wait', 'cancelled_count', 'add_tool']) {
    assert.equal(
      longNames.filter((n) => n.endsWith(`_${tool}`)).length,
      1,
      `${tool} in ${longNames.join(',')}`,
    );
  }
  const echo = longNames.find((n) => n.endsWith('_echo'))!;
  const again = await startGateway(t, { servers: { [long]: probe('long'), b: probe('b') } });
  const { client: other } = await connectHttp(t, httpUrl(again));
  assert.ok((await toolNames(other)).includes(echo), 'the short form is the same in every run');
  const answer = textJson(await client.callTool({ name: echo, arguments: {} }));
  assert.equal(answer.server, 'long');
  assert.equal((answer.params as { name: string }).name, 'echo');
});

test('a collision under the error policy stops startup with a message naming both backends', async (t) => {
  await assert.rejects(
    startGateway(t, {
      servers: { a: probe('a'), b: probe('b') },
      namespacing: { mode: 'never', collisions: 'error' },
    }),
    (err: unknown) => {
      assert.ok(err instanceof StartupError);
      assert.match(err.message, /tool "echo" is exposed by (a and b|b and a)/);
      assert.match(err.message, /namespacing\.collisions/);
      return true;
    },
  );
});

test('a collision under the priority policy goes to the higher priority backend', async (t) => {
  const sb = await startGateway(t, {
    servers: { a: probe('a'), b: probe('b', { extra: { priority: 5 } }) },
    namespacing: { mode: 'never', collisions: 'priority' },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const names = await toolNames(client);
  assert.equal(names.filter((n) => n === 'echo').length, 1);
  assert.equal(textJson(await client.callTool({ name: 'echo', arguments: {} })).server, 'b');
  assert.match(
    textOf(
      await client.getPrompt({ name: 'greet', arguments: { who: 'x' } }).then((r) => ({
        content: [r.messages[0]!.content],
      })),
    ),
    /^b greets x$/,
  );
});

test('a resource link in a tool result reads back through its namespaced URI', async (t) => {
  const sb = await startGateway(t, { servers: { a: probe('a'), b: probe('b') } });
  const { client } = await connectHttp(t, httpUrl(sb));
  await client.callTool({ name: 'a_touch', arguments: {} });
  const linked = await client.callTool({ name: 'a_link', arguments: {} });
  const [link, embedded] = linked.content as { type: string; uri?: string; resource?: { uri: string } }[];
  assert.equal(link?.type, 'resource_link');
  assert.equal(link?.uri, 'a+probe://a/counter');
  assert.equal(embedded?.resource?.uri, 'a+probe://a/items/alpha');
  const read = await client.readResource({ uri: link!.uri! });
  assert.deepEqual(read.contents, [
    { uri: 'a+probe://a/counter', mimeType: 'text/plain', text: 'a counter 1' },
  ]);
  const item = await client.readResource({ uri: embedded!.resource!.uri });
  assert.equal((item.contents[0] as { text: string }).text, 'a item alpha');
  const templates = (await client.listResourceTemplates()).resourceTemplates.map((x) => x.uriTemplate).sort();
  assert.deepEqual(templates, ['a+probe://a/items/{id}', 'b+probe://b/items/{id}']);
});
