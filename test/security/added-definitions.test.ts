// Definitions smuggled in after a backend was first pinned: a tool, prompt or template that
// appears later follows pinning.newTools (hide by default, approve, or show) instead of being
// admitted silently.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectHttp } from '../support/mcp-clients.js';
import { captureLog } from '../support/log-capture.js';
import { eventually } from '../support/poll.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { tempDbPath } from '../trust/helpers.js';
import { listed, morphing, pins } from './pinning-helpers.js';

const GREET = { name: 'greet', description: 'Says hello', inputSchema: { type: 'object' } };
const EXPORT = {
  name: 'export_chat',
  description: 'Saves the conversation for later',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
};
const PROMPT = {
  name: 'review',
  description: 'Reviews a change',
  arguments: [{ name: 'diff', required: true }],
};
const TEMPLATE = { uriTemplate: 'notes://{id}', name: 'note', description: 'A note by id' };

test('by default a tool, prompt or template added later stays hidden until an operator pins it', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: { s: morphing({ tools: [GREET] }) },
    audit: { path },
    pinning: { enabled: true },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  assert.deepEqual(listed(sb, 'tools'), ['greet', 'morph']);
  await client.callTool({
    name: 'morph',
    arguments: { tools: [GREET, EXPORT], prompts: [PROMPT], templates: [TEMPLATE] },
  });
  await eventually('the additions are held', async () => {
    const { out } = await pins(path, 'list');
    return ['export_chat  tool', 'review  prompt', 'notes://{id}  template'].every((s) =>
      new RegExp(`s  ${s.replace(/[{}]/g, '\\$&')} .*QUARANTINED \\(new since`).test(out),
    );
  });
  assert.deepEqual(listed(sb, 'tools'), ['greet', 'morph']);
  assert.deepEqual(listed(sb, 'prompts'), []);
  assert.deepEqual(listed(sb, 'resourceTemplates'), []);
  const refused = await client.callTool({ name: 'export_chat', arguments: {} }).catch((e: Error) => e);
  assert.match(String((refused as Error).message ?? JSON.stringify(refused)), /Unknown tool: export_chat/);

  assert.equal((await pins(path, 'approve', 's', 'export_chat')).code, 0);
  assert.equal((await pins(path, 'approve', 's', 'review', '--kind', 'prompt')).code, 0);
  assert.equal((await pins(path, 'approve', 's', 'notes://{id}', '--kind', 'template')).code, 0);
  sb.recheckPins();
  assert.deepEqual(listed(sb, 'tools'), ['export_chat', 'greet', 'morph']);
  assert.deepEqual(listed(sb, 'prompts'), ['review']);
  assert.deepEqual(listed(sb, 'resourceTemplates'), ['notes://{id}']);
  assert.match((await pins(path, 'list')).out, /s {2}export_chat {2}tool .* pinned/);
});

test('a backend that listed nothing of a kind at first cannot add to it silently', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: { s: morphing({}) },
    audit: { path },
    pinning: { enabled: true },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  await client.callTool({ name: 'morph', arguments: { prompts: [PROMPT] } });
  await eventually('the prompt is held', async () =>
    /s {2}review {2}prompt .*QUARANTINED/.test((await pins(path, 'list')).out),
  );
  assert.deepEqual(listed(sb, 'prompts'), []);
});

test('with newTools: approve a tool, prompt or template added later is listed and each use asks a human until pinned', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: { s: morphing({ tools: [GREET] }) },
    audit: { path },
    pinning: { enabled: true, newTools: 'approve' },
  });
  const asked: string[] = [];
  const { client } = await connectHttp(t, httpUrl(sb), {
    capabilities: { elicitation: { form: {} } },
    setup: (c) =>
      c.setRequestHandler('elicitation/create', async (req) => {
        asked.push(String((req.params as { message: string }).message));
        return { action: 'accept', content: { approve: true } };
      }),
  });
  await client.callTool({
    name: 'morph',
    arguments: { tools: [GREET, EXPORT], prompts: [PROMPT], templates: [TEMPLATE] },
  });
  await eventually('the additions are listed', () => listed(sb, 'tools').includes('export_chat'));
  await eventually('the prompt is listed', () => listed(sb, 'prompts').includes('review'));
  await eventually('the template is listed', () => listed(sb, 'resourceTemplates').length === 1);
  await client.callTool({ name: 'greet', arguments: {} });
  assert.equal(asked.length, 0, 'a pinned tool asked');
  await client.callTool({ name: 'export_chat', arguments: { text: 'hi' } });
  assert.equal(asked.length, 1);
  assert.match(asked[0]!, /tool "export_chat" of server "s"/);
  assert.match(asked[0]!, /new since its server was first pinned \(switchboard pins diff s export_chat\)/);
  await client.getPrompt({ name: 'review', arguments: { diff: 'x' } });
  assert.equal(asked.length, 2);
  await client.readResource({ uri: 'notes://7' });
  assert.equal(asked.length, 3, 'a read through a held template did not ask');

  assert.equal((await pins(path, 'approve', 's', 'export_chat')).code, 0);
  sb.recheckPins();
  await client.callTool({ name: 'export_chat', arguments: { text: 'hi' } });
  assert.equal(asked.length, 3, 'a pinned tool still asked');
});

test('with newTools: show a tool added later is pinned, served and logged', async (t) => {
  const path = await tempDbPath(t);
  const log = captureLog('info');
  const sb = await startGateway(
    t,
    {
      servers: { s: morphing({ tools: [GREET] }) },
      audit: { path },
      pinning: { enabled: true, newTools: 'show' },
    },
    { log: log.logger },
  );
  const { client } = await connectHttp(t, httpUrl(sb));
  await client.callTool({ name: 'morph', arguments: { tools: [GREET, EXPORT] } });
  await eventually('the tool is listed', () => listed(sb, 'tools').includes('export_chat'));
  assert.match((await pins(path, 'list')).out, /s {2}export_chat {2}tool .* pinned/);
  assert.ok(
    log.lines().some((l) => l.msg === 'new tool pinned' && l.backend === 's' && l.name === 'export_chat'),
    log.text(),
  );
});
