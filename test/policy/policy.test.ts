// Declarative policy through a real switchboard: the same rules filter lists and decide calls, a
// target the caller cannot see answers exactly as an unknown one, argument conditions are decided
// at the call, and a condition that cannot be judged denies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initialize, probe, rawStdio } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { tempDbPath } from '../trust/helpers.js';
import { captureLog } from '../support/log-capture.js';
import { auditRows } from './helpers.js';

const TWO = { a: probe('a'), b: probe('b') };

test('the rules filter every list: tools, prompts, resources and templates', async (t) => {
  const sb = await startGateway(t, {
    servers: TWO,
    policy: {
      rules: [
        { name: 'no-b-tools', backends: ['b'], tools: ['*'], effect: 'deny' },
        { name: 'no-a-prompts', backends: ['a'], prompts: ['greet'], effect: 'deny' },
        { name: 'no-b-counter', backends: ['b'], resources: ['probe://b/counter'], effect: 'deny' },
        { name: 'no-a-items', backends: ['a'], resources: ['probe://a/items/*'], effect: 'deny' },
      ],
    },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const tools = (await client.listTools()).tools.map((x) => x.name);
  assert.ok(tools.includes('a_echo'), tools.join());
  assert.ok(!tools.some((n) => n.startsWith('b_')), tools.join());
  assert.deepEqual(
    (await client.listPrompts()).prompts.map((p) => p.name),
    ['b_greet'],
  );
  assert.deepEqual(
    (await client.listResources()).resources.map((r) => r.uri),
    ['a+probe://a/counter'],
  );
  assert.deepEqual(
    (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate),
    ['b+probe://b/items/{id}'],
  );
});

test('a denied target answers byte for byte as an unknown one, for tools, prompts and resources', async (t) => {
  const { write, inbox } = await rawStdio(t, {
    servers: TWO,
    policy: {
      rules: [
        { callers: ['host:*'], backends: ['b'], tools: ['echo'], effect: 'deny' },
        { backends: ['b'], prompts: ['greet'], effect: 'deny' },
        { backends: ['b'], resources: ['probe://b/*'], effect: 'deny' },
      ],
    },
  });
  write(initialize());
  await inbox.next((m) => m.id === 'init');
  write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  const cases: [string, (n: string) => object, string, string][] = [
    ['tools/call', (n) => ({ name: n, arguments: {} }), 'b_echo', 'b_nothing'],
    ['prompts/get', (n) => ({ name: n, arguments: { who: 'x' } }), 'b_greet', 'b_nothing'],
    ['resources/read', (n) => ({ uri: n }), 'b+probe://b/counter', 'b+probe://b/nothing'],
    [
      'completion/complete',
      (n) => ({ ref: { type: 'ref/prompt', name: n }, argument: { name: 'who', value: '' } }),
      'b_greet',
      'b_nothing',
    ],
  ];
  let id = 0;
  const ask = async (method: string, params: object) => {
    const n = ++id;
    write(JSON.stringify({ jsonrpc: '2.0', id: n, method, params }));
    const answer = await inbox.next((m) => m.id === n);
    return JSON.stringify(answer.error);
  };
  for (const [method, params, denied, unknown] of cases) {
    const a = await ask(method, params(denied));
    const b = await ask(method, params(unknown));
    assert.ok(a !== undefined && a.includes('"code"'), `${method} ${denied} was answered: ${a}`);
    assert.equal(a.replaceAll(denied, unknown), b, `${method}: denied and unknown differ`);
  }
  // The same backend's other tools are still there.
  const n = ++id;
  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: n,
      method: 'tools/call',
      params: { name: 'a_echo', arguments: {} },
    }),
  );
  assert.ok((await inbox.next((m) => m.id === n)).result);
});

test('a rule with argument conditions lists the tool and decides each call by its arguments', async (t) => {
  const sb = await startGateway(t, {
    servers: TWO,
    policy: {
      rules: [
        { name: 'no-etc', tools: ['echo'], when: { path: { pathPrefix: '/etc' } }, effect: 'deny' },
        { name: 'modes', tools: ['echo'], when: { mode: { in: ['r', 'w'] } }, effect: 'allow' },
        { name: 'only-modes', backends: ['a'], tools: ['echo'], effect: 'deny' },
      ],
    },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const tools = (await client.listTools()).tools.map((x) => x.name);
  assert.ok(tools.includes('a_echo') && tools.includes('b_echo'), tools.join());
  const call = (name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: args }).then(
      () => 'ok',
      (e: Error & { code?: number }) => `${e.code}`,
    );
  assert.equal(await call('a_echo', { mode: 'r', path: '/tmp/x' }), 'ok');
  // Normalised first: a detour through .. does not slip past a path rule.
  assert.equal(await call('a_echo', { mode: 'r', path: '/tmp/../etc/passwd' }), '-32040');
  assert.equal(await call('b_echo', { path: '//etc/./shadow' }), '-32040');
  assert.equal(await call('a_echo', { mode: 'x' }), '-32040');
  // b has no deny after the conditional rules: its default (allow for hosts) decides.
  assert.equal(await call('b_echo', { mode: 'x' }), 'ok');
  const refused = await client.callTool({ name: 'a_echo', arguments: { mode: 'x' } }).catch((e: Error) => e);
  assert.match(String((refused as Error).message), /a_echo refused by policy for these arguments/);
  // The rule's name stays inside: the caller is not told how the policy is written.
  assert.doesNotMatch(String((refused as Error).message), /only-modes/);
});

test('a condition that cannot be judged denies the call and logs the rule that could not judge it', async (t) => {
  const path = await tempDbPath(t);
  const log = captureLog('debug');
  const sb = await startGateway(
    t,
    {
      servers: TWO,
      audit: { path },
      policy: {
        rules: [{ name: 'tmp-only', tools: ['echo'], when: { path: { prefix: '/tmp/' } }, effect: 'allow' }],
        defaults: { host: 'deny' },
      },
    },
    { log: log.logger },
  );
  const { client } = await connectHttp(t, httpUrl(sb));
  assert.ok((await client.callTool({ name: 'a_echo', arguments: { path: '/tmp/x' } })).content);
  const refused = await client
    .callTool({ name: 'a_echo', arguments: { path: { toString: '/tmp/x' } } })
    .catch((e: Error) => e);
  assert.match(String((refused as Error).message), /could not judge its arguments/);
  const warned = log.lines().find((l) => l.msg === 'policy rule could not be evaluated; call denied');
  assert.ok(warned, 'no log line for the failed evaluation');
  assert.equal(warned.rule, 'tmp-only');
  assert.match(String(warned.err), /prefix on path, which is a object, not a string/);
  const rows = auditRows(sb, path).filter((r) => r.method === 'tools/call');
  assert.deepEqual(
    rows.map((r) => [r.decision, r.rule]),
    [
      ['allow', 'tmp-only'],
      ['deny', 'tmp-only'],
    ],
  );
});

test('audit records name the deciding rule, and hold argument values only for rules with auditValues', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: TWO,
    audit: { path },
    policy: {
      rules: [
        { name: 'watched', backends: ['a'], tools: ['echo'], effect: 'allow', auditValues: true },
        { name: 'gone', backends: ['b'], tools: ['echo'], effect: 'deny' },
      ],
    },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  await client.callTool({ name: 'a_echo', arguments: { note: 'kept' } });
  await client.callTool({ name: 'a_touch', arguments: {} });
  await client.callTool({ name: 'b_echo', arguments: { note: 'hidden' } }).catch(() => undefined);
  const rows = auditRows(sb, path).filter((r) => r.method === 'tools/call');
  assert.deepEqual(
    rows.map((r) => [r.target_name, r.decision, r.rule, r.args]),
    [
      ['echo', 'allow', 'watched', '{"note":"kept"}'],
      ['touch', 'allow', 'defaults.host', null],
      ['echo', 'deny', 'gone', null],
    ],
  );
});

test('hosts reach a handler only through a rule that names it', async (t) => {
  const { write, inbox, sb } = await rawStdio(t, {
    servers: { a: probe('a') },
    policy: { rules: [{ callers: ['host:stdio'], handlers: ['test.open'], effect: 'allow' }] },
  });
  sb.gateway.handlers.register('test.open', () => ({ opened: true }), 'test');
  sb.gateway.handlers.register('test.closed', () => ({ opened: true }), 'test');
  write(initialize());
  await inbox.next((m) => m.id === 'init');
  write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'test.open' }));
  write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'test.closed' }));
  assert.deepEqual((await inbox.next((m) => m.id === 1)).result, { opened: true });
  assert.deepEqual((await inbox.next((m) => m.id === 2)).error, {
    code: -32601,
    message: 'Method not found: test.closed',
  });
});
