// Switchboard in front of real MCP servers from npm (everything, memory, filesystem), used by the SDK's own Client.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import type { Switchboard } from '../../src/switchboard.js';
import { Inbox } from '../gateway/harness.js';
import { connectHttp, openHttp } from '../support/mcp-clients.js';
import { httpUrl, launchSwitchboard } from '../support/start-switchboard.js';

const modules = new URL('../../../node_modules/@modelcontextprotocol/', import.meta.url);
const entry = (pkg: string) => fileURLToPath(new URL(`${pkg}/dist/index.js`, modules));

let dir: string;
let sb: Switchboard;
let client: Client;
const logs = new Inbox<{ level: string; data: unknown }>();

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-e2e-'));
  await writeFile(join(dir, 'hello.txt'), 'hello from the filesystem server\n');
  sb = await launchSwitchboard({
    servers: {
      // The everything server's entry takes the transport as its first argument.
      everything: { command: process.execPath, args: [entry('server-everything'), 'stdio'] },
      // Without MEMORY_FILE_PATH the memory server writes inside its own package directory.
      memory: {
        command: process.execPath,
        args: [entry('server-memory')],
        env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') },
        // Sandboxed, /tmp is private: the directory it keeps its file in is listed as writable.
        sandbox: { write: [dir] },
      },
      files: {
        command: process.execPath,
        args: [entry('server-filesystem'), dir],
        sandbox: { write: [dir] },
      },
    },
  });
  assert.deepEqual(sb.failedBackends, []);
  ({ client } = await openHttp(httpUrl(sb), {
    name: 'e2e-host',
    setup: (c) => c.setNotificationHandler('notifications/message', (n) => logs.push(n.params)),
  }));
});

after(async () => {
  await client?.close();
  await sb?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const text = (result: { content?: unknown }) =>
  ((result.content as { type: string; text?: string }[] | undefined) ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

test('every server’s tools are listed under its prefix and answer through switchboard', async () => {
  const names = (await client.listTools()).tools.map((t) => t.name);
  for (const name of [
    'everything_echo',
    'everything_get-sum',
    'memory_create_entities',
    'memory_read_graph',
    'files_read_text_file',
  ]) {
    assert.ok(names.includes(name), `${name} missing from ${names.join(', ')}`);
  }
  assert.equal(
    text(await client.callTool({ name: 'everything_echo', arguments: { message: 'hi there' } })),
    'Echo: hi there',
  );
  assert.equal(
    text(await client.callTool({ name: 'everything_get-sum', arguments: { a: 2, b: 40 } })),
    'The sum of 2 and 40 is 42.',
  );
});

test('the memory server keeps what it is told, across calls', async () => {
  await client.callTool({
    name: 'memory_create_entities',
    arguments: {
      entities: [{ name: 'Switchboard', entityType: 'project', observations: ['fronts MCP servers'] }],
    },
  });
  const graph = await client.callTool({ name: 'memory_read_graph', arguments: {} });
  assert.match(text(graph), /"name":\s*"Switchboard"/);
  assert.match(text(graph), /fronts MCP servers/);
  assert.match(await readFile(join(dir, 'memory.jsonl'), 'utf8'), /Switchboard/);
});

test('the filesystem server reads and writes inside its directory and nowhere else', async () => {
  const read = await client.callTool({
    name: 'files_read_text_file',
    arguments: { path: join(dir, 'hello.txt') },
  });
  assert.equal(text(read).trim(), 'hello from the filesystem server');
  await client.callTool({
    name: 'files_write_file',
    arguments: { path: join(dir, 'new.txt'), content: 'written' },
  });
  assert.equal(await readFile(join(dir, 'new.txt'), 'utf8'), 'written');
  const outside = await client.callTool({
    name: 'files_read_text_file',
    arguments: { path: '/etc/hostname' },
  });
  assert.equal(outside.isError, true);
});

test('everything’s resources and templates are listed namespaced and read back', async () => {
  const resources = (await client.listResources()).resources;
  const doc = resources.find((r) => r.uri === 'everything+demo://resource/static/document/instructions.md');
  assert.ok(doc, resources.map((r) => r.uri).join(', '));
  const read = await client.readResource({ uri: doc.uri });
  assert.equal(read.contents[0]?.uri, doc.uri);
  assert.ok(((read.contents[0] as { text?: string }).text ?? '').length > 0);
  const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
  assert.ok(templates.includes('everything+demo://resource/dynamic/text/{resourceId}'), templates.join(', '));
  const dynamic = await client.readResource({ uri: 'everything+demo://resource/dynamic/text/7' });
  assert.match((dynamic.contents[0] as { text: string }).text, /^Resource 7: This is a plaintext resource/);
});

test('resource links from a tool read back through switchboard', async () => {
  const result = await client.callTool({ name: 'everything_get-resource-links', arguments: { count: 2 } });
  const links = (result.content as { type: string; uri?: string }[]).filter(
    (c) => c.type === 'resource_link',
  );
  assert.equal(links.length, 2);
  for (const link of links) {
    assert.ok(link.uri!.startsWith('everything+demo://'), link.uri);
    const read = await client.readResource({ uri: link.uri! });
    assert.equal(read.contents[0]?.uri, link.uri);
  }
});

test('prompts are served with their arguments, and completion reaches everything', async () => {
  const names = (await client.listPrompts()).prompts.map((p) => p.name);
  assert.ok(names.includes('everything_args-prompt'), names.join(', '));
  const prompt = await client.getPrompt({
    name: 'everything_args-prompt',
    arguments: { city: 'Lyon', state: 'Rhône' },
  });
  assert.deepEqual(prompt.messages[0]?.content, { type: 'text', text: "What's weather in Lyon, Rhône?" });
  const completion = await client.complete({
    ref: { type: 'ref/prompt', name: 'everything_completable-prompt' },
    argument: { name: 'department', value: 'S' },
  });
  assert.deepEqual(completion.completion.values, ['Sales', 'Support']);
});

test('everything’s progress and log messages reach the host', async () => {
  const progress: number[] = [];
  await client.callTool(
    { name: 'everything_trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } },
    { onprogress: (p) => progress.push(p.progress) },
  );
  assert.deepEqual(progress, [1, 2]);

  await client.setLoggingLevel('debug');
  const toggled = await client.callTool({ name: 'everything_toggle-simulated-logging', arguments: {} });
  assert.match(text(toggled), /Started simulated/);
  // It sends one message at once, then one every few seconds until toggled off.
  const line = await logs.next();
  assert.match(String(line.data), /-level message|level-message/);
  await client.callTool({ name: 'everything_toggle-simulated-logging', arguments: {} });
});

test('everything’s sampling request reaches the host that called it and the answer goes back', async (t) => {
  const { client: host } = await connectHttp(t, httpUrl(sb), {
    name: 'e2e-sampling-host',
    capabilities: { sampling: {} },
    setup: (c) =>
      c.setRequestHandler('sampling/createMessage', async (req) => {
        const asked = (req.params.messages[0]?.content as { text: string }).text;
        return {
          role: 'assistant',
          model: 'e2e-model',
          content: { type: 'text', text: `answer to ${asked}` },
        };
      }),
  });
  // everything adds its sampling tool once it has seen switchboard declare sampling.
  const names = (await host.listTools()).tools.map((x) => x.name);
  assert.ok(names.includes('everything_trigger-sampling-request'), names.join(', '));
  const result = await host.callTool({
    name: 'everything_trigger-sampling-request',
    arguments: { prompt: 'ping', maxTokens: 5 },
  });
  assert.match(text(result), /answer to Resource trigger-sampling-request context: ping/);
  assert.match(text(result), /e2e-model/);
});

test('instructions of the servers that have them reach the host', () => {
  const instructions = client.getInstructions() ?? '';
  assert.match(instructions, /## everything\n/);
});
