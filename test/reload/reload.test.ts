// Hot reload in-process: backends added, removed and replaced while a host session stays open and
// a call to an unchanged backend is under way; refused reloads leave the running configuration.
import assert from 'node:assert/strict';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connectBridge } from '../../src/public/bridge-client/index.js';
import { loadConfig } from '../../src/config/load.js';
import { Config, type ConfigInput } from '../../src/config/schema.js';
import { Inbox } from '../gateway/harness.js';
import { connect, faulty, json, running, toolNames } from '../faults/helpers.js';
import { eventually } from '../support/poll.js';
import { configFor, startGateway } from '../support/start-switchboard.js';

const CALLER = fileURLToPath(new URL('../fixtures/bridge-caller.js', import.meta.url));

test('a reload adds, removes and replaces backends; an unchanged one and its call carry on', async (t) => {
  const input = (servers: ConfigInput['servers']): ConfigInput => ({
    namespacing: { mode: 'always' },
    shutdown: { drainMs: 60_000 },
    servers,
  });
  const before = { keep: faulty(), gone: faulty(), change: faulty() };
  const sb = await startGateway(t, input(before));
  let listChanged = 0;
  const client = await connect(t, sb, () => listChanged++);
  const pid = async (backend: string) =>
    (json(await client.callTool({ name: `${backend}_pids`, arguments: {} })) as { pid: number }).pid;
  const keepPid = await pid('keep');
  const gonePid = await pid('gone');
  const changePid = await pid('change');
  // Calls under way on the unchanged backend and on those about to be replaced and removed.
  const slow = async (backend: string) => {
    const progress = new Inbox<number>();
    const answer = client.callTool(
      // Long enough (4 s) to be under way through the reload on a loaded machine.
      { name: `${backend}_slow`, arguments: { steps: 40, everyMs: 100 } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    await progress.next();
    return { answer };
  };
  const [onKeep, onChanged, onRemoved] = (await Promise.all(['keep', 'change', 'gone'].map(slow))).map(
    (s) => s.answer,
  );

  const report = await sb.reload(
    configFor(input({ keep: faulty(), change: faulty([], { env: { VERSION: '2' } }), added: faulty() })),
  );
  assert.deepEqual(
    { added: report.added, removed: report.removed, replaced: report.replaced, failed: report.failed },
    { added: ['added'], removed: ['gone'], replaced: ['change'], failed: [] },
  );
  assert.equal(json(await onKeep).steps, 40, 'the call to the unchanged backend completed');
  assert.equal(json(await onChanged).steps, 40, 'the call under way on the replaced backend completed');
  assert.equal(json(await onRemoved).steps, 40, 'the call under way on the removed backend completed');
  assert.equal(await pid('keep'), keepPid, 'the unchanged backend kept its process');
  assert.notEqual(await pid('change'), changePid, 'the changed backend runs in a new process');
  assert.ok(!running(changePid), 'the replaced process was ended after its calls');
  assert.ok(!running(gonePid), 'the removed backend was ended');
  const names = await toolNames(client);
  assert.ok(names.includes('added_echo'));
  assert.ok(!names.some((n) => n.startsWith('gone_')));
  await assert.rejects(client.callTool({ name: 'gone_echo', arguments: {} }), /gone_echo/);
  await eventually('the host heard tools/list_changed', () => listChanged > 0);
  assert.deepEqual(json(await client.callTool({ name: 'added_echo', arguments: { x: 1 } })).arguments, {
    x: 1,
  });
});

test('adding a backend under conditional namespacing prefixes every name', async (t) => {
  const sb = await startGateway(t, { servers: { a: faulty() } });
  const client = await connect(t, sb);
  assert.ok((await toolNames(client)).includes('echo'));
  await sb.reload(configFor({ servers: { a: faulty(), b: faulty() } }));
  const names = await toolNames(client);
  assert.ok(names.includes('a_echo') && names.includes('b_echo'), names.join(', '));
  assert.ok(!names.includes('echo'));
});

test('backends named like members every object has (constructor, toString) come and go by reload', async (t) => {
  const sb = await startGateway(t, { servers: { a: faulty() } });
  const client = await connect(t, sb);
  const report = await sb.reload(
    configFor({ servers: { a: faulty(), constructor: faulty(), toString: faulty() } }),
  );
  assert.deepEqual(report.added.sort(), ['constructor', 'toString']);
  const names = await toolNames(client);
  assert.ok(names.includes('constructor_echo') && names.includes('toString_echo'), names.join(', '));
  const back = await sb.reload(configFor({ servers: { a: faulty() } }));
  assert.deepEqual(back.removed.sort(), ['constructor', 'toString']);
  assert.ok((await toolNames(client)).includes('echo'));
});

test('a reload whose names collide under collisions: error is refused and the running one stays', async (t) => {
  const sb = await startGateway(t, { namespacing: { mode: 'never' }, servers: { a: faulty() } });
  const client = await connect(t, sb);
  const { pid } = json(await client.callTool({ name: 'pids', arguments: {} })) as { pid: number };
  await assert.rejects(
    sb.reload(configFor({ namespacing: { mode: 'never' }, servers: { a: faulty(), b: faulty() } })),
    /name collisions \(namespacing\.collisions is "error"\):\n {2}tool "echo" is exposed by a and b/,
  );
  assert.equal(sb.reloads.refused, 1);
  assert.match(sb.reloads.lastError ?? '', /name collisions/);
  assert.deepEqual([...sb.gateway.backends.keys()], ['a']);
  assert.equal((json(await client.callTool({ name: 'pids', arguments: {} })) as { pid: number }).pid, pid);
  // The same change with priorities is accepted.
  await sb.reload(
    configFor({
      namespacing: { mode: 'never', collisions: 'priority' },
      servers: { a: faulty(), b: faulty([], { priority: 1 }) },
    }),
  );
  assert.equal(sb.reloads.applied, 1);
  // The refusal is no longer the latest word on the file.
  assert.equal(sb.reloads.lastError, undefined);
  assert.notEqual((json(await client.callTool({ name: 'pids', arguments: {} })) as { pid: number }).pid, pid);
});

test('an invalid file is refused with file, path and expectation; the running config stays', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-reload-'));
  const file = join(dir, 'switchboard.yaml');
  const sb = await startGateway(t, { servers: { a: faulty() } });
  const client = await connect(t, sb);
  await writeFile(
    file,
    `servers:\n  a:\n    command: ${process.execPath}\nlimits:\n  maxCallsPerSession: many\n`,
  );
  await assert.rejects(
    sb.reload(async () => (await loadConfig(file)).config),
    (err: Error) => {
      assert.match(
        err.message,
        new RegExp(`${file.replace(/[.]/g, '\\.')}: limits\\.maxCallsPerSession: .*number`),
      );
      return true;
    },
  );
  await writeFile(file, 'servers: [\n');
  await assert.rejects(
    sb.reload(async () => (await loadConfig(file)).config),
    /line 2, column 1: invalid YAML/,
  );
  assert.equal(sb.reloads.refused, 2);
  assert.equal(sb.reloads.applied, 0);
  assert.ok(json(await client.callTool({ name: 'echo', arguments: {} })));
});

test('settings that need a restart are reported and keep their running value', async (t) => {
  const sb = await startGateway(t, { servers: { a: faulty() }, limits: { maxCallsPerSession: 8 } });
  const report = await sb.reload(
    Config.parse({
      servers: { a: faulty() },
      http: { port: 0, path: '/other' },
      limits: { maxCallsPerSession: 4, maxMessageBytes: 8192 },
    }),
  );
  assert.deepEqual(report.needRestart.sort(), ['http.path', 'limits.maxMessageBytes']);
  assert.deepEqual(sb.reloads.needRestart.sort(), ['http.path', 'limits.maxMessageBytes']);
  assert.equal(sb.gateway.config.http.path, '/mcp');
  assert.equal(sb.gateway.config.limits.maxMessageBytes, 4 * 1024 * 1024);
  assert.equal(sb.gateway.config.limits.maxCallsPerSession, 4, 'the rest was applied');
  assert.deepEqual(report.added, []);
  assert.deepEqual(report.replaced, []);
});

test('a bridge token of an unchanged backend stays valid across a reload', async (t) => {
  const caller = { command: process.execPath, args: [CALLER], bridge: { allow: ['f_echo', 'g_echo'] } };
  const servers = { caller, f: faulty() };
  const sb = await startGateway(t, { namespacing: { mode: 'always' }, servers });
  const client = await connect(t, sb);
  // `sdk` opens a new bridge connection each time: it authenticates with the token of its start.
  const viaBridge = async (name: string) =>
    json(await client.callTool({ name: 'caller_sdk', arguments: { name, arguments: { via: 'bridge' } } }));
  assert.equal((await viaBridge('f_echo')).identity, 'caller');
  await sb.reload(configFor({ namespacing: { mode: 'always' }, servers: { ...servers, g: faulty() } }));
  const after = await viaBridge('g_echo');
  assert.equal(after.identity, 'caller', JSON.stringify(after));
  assert.ok(!after.error, JSON.stringify(after.error));
});

test('a replacement that fails to start leaves the running backend, and its bridge token, in place', async (t) => {
  const caller = { command: process.execPath, args: [CALLER], bridge: { allow: ['g_echo'] } };
  const sb = await startGateway(t, { namespacing: { mode: 'always' }, servers: { caller, g: faulty() } });
  const client = await connect(t, sb);
  const viaBridge = async () =>
    json(await client.callTool({ name: 'caller_sdk', arguments: { name: 'g_echo', arguments: {} } }));
  assert.equal((await viaBridge()).identity, 'caller');
  const broken = { ...caller, args: ['-e', 'process.exit(3)'] };
  const report = await sb.reload(
    configFor({ namespacing: { mode: 'always' }, servers: { caller: broken, g: faulty() } }),
  );
  assert.deepEqual(report.replaced, []);
  assert.deepEqual(
    report.failed.map((f) => f.name),
    ['caller'],
  );
  assert.deepEqual(
    (sb.gateway.config.servers.caller as { args?: string[] }).args,
    [CALLER],
    'the running entry stays',
  );
  // Status says so (the file and what runs differ), until a reload applies whole.
  assert.deepEqual(
    sb.reloads.failed.map((f) => f.name),
    ['caller'],
  );
  assert.match(sb.reloads.failed[0]!.error, /exited with code 3/);
  // A new bridge connection of the running process still authenticates with its token.
  const after = await viaBridge();
  assert.equal(after.identity, 'caller', JSON.stringify(after));
  assert.ok(!after.error, JSON.stringify(after.error));
  await sb.reload(configFor({ namespacing: { mode: 'always' }, servers: { caller, g: faulty() } }));
  assert.deepEqual(sb.reloads.failed, []);
});

test("a remote backend's configured bridge token comes and goes with its entry", async (t) => {
  const sb = await startGateway(t, { servers: { a: faulty() } });
  const token = 'remote-token-0123456789abcdef';
  // Nothing listens there: the backend is down, but its identity is configured all the same.
  const remote = { url: 'http://127.0.0.1:9/mcp', bridge: { token } };
  const report = await sb.reload(configFor({ servers: { a: faulty(), r: remote } }));
  assert.deepEqual(
    report.failed.map((f) => f.name),
    ['r'],
  );
  const bridge = await connectBridge({ path: sb.bridgePath!, token });
  assert.equal(bridge.identity, 'r');
  bridge.close();
  await sb.reload(configFor({ servers: { a: faulty() } }));
  await assert.rejects(connectBridge({ path: sb.bridgePath!, token }), /Authentication failed/);
});

test('a backend added by a reload gets the bridge grants its entry names; a changed grant applies', async (t) => {
  const servers = { f: faulty() };
  const sb = await startGateway(t, { namespacing: { mode: 'always' }, servers });
  const client = await connect(t, sb);
  const caller = { command: process.execPath, args: [CALLER], bridge: { allow: ['f_echo'] } };
  await sb.reload(configFor({ namespacing: { mode: 'always' }, servers: { ...servers, caller } }));
  const viaBridge = async (name: string) =>
    json(await client.callTool({ name: 'caller_sdk', arguments: { name, arguments: { via: 'bridge' } } }));
  await eventually('caller listed', async () => (await toolNames(client)).includes('caller_sdk'));
  const granted = await viaBridge('f_echo');
  assert.ok(!granted.error, JSON.stringify(granted));
  // Taking the grant away by reload: the same call now looks like an unknown tool.
  const revoked = { ...caller, bridge: { allow: [] } };
  await sb.reload(configFor({ namespacing: { mode: 'always' }, servers: { ...servers, caller: revoked } }));
  await eventually('caller listed', async () => (await toolNames(client)).includes('caller_sdk'));
  const refused = await viaBridge('f_echo');
  assert.match(JSON.stringify(refused.error), /Unknown tool/);
});

test('an added server that failed to start is listed in reloads.failed until a retry starts it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-reload-retry-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const sb = await startGateway(t, { servers: { a: faulty() } });
  const late = faulty(['--fail-starts', '1', '--state', join(dir, 'starts')], {
    restart: { initialMs: 100 },
    // Its /tmp is private to each start: the count is kept where it is let write.
    sandbox: { write: [dir] },
  });
  const report = await sb.reload(configFor({ servers: { a: faulty(), late } }));
  assert.deepEqual(
    report.failed.map((f) => f.name),
    ['late'],
  );
  assert.deepEqual(
    sb.reloads.failed.map((f) => f.name),
    ['late'],
  );
  // Retried with backoff, it starts: no longer news, and status no longer says it.
  await eventually('the retry to start it', () => sb.gateway.backends.get('late')?.state === 'ready');
  assert.deepEqual(sb.reloads.failed, []);
  assert.deepEqual((JSON.parse(JSON.stringify(sb.reloads)) as { failed: unknown[] }).failed, []);
});
