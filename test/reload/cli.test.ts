// A real `switchboard up` child: its --config file reloaded on SIGHUP and on change, and its
// graceful stop on SIGTERM (exit code and log say what was cut).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Inbox } from '../gateway/harness.js';
import { faulty, json, running, toolNames } from '../faults/helpers.js';
import { eventually } from '../support/poll.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

interface Up {
  child: ChildProcess;
  client: Client;
  file: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

async function up(t: TestContext, config: object, flags: string[] = []): Promise<Up> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-up-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'switchboard.json');
  await writeFile(file, JSON.stringify(config));
  const child = spawn(process.execPath, [MAIN, 'up', '--config', file, '--port', '0', ...flags], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, XDG_STATE_HOME: dir },
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(() => void child.kill('SIGKILL'));
  let text = '';
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  await eventually('switchboard to listen', () => /Streamable HTTP: (\S+)/.test(text), 30_000);
  const url = /Streamable HTTP: (\S+)/.exec(text)![1]!;
  // The front's default: the local token (a reload keeps it, and so the session).
  const token = readFileSync(join(dir, 'switchboard', 'http-token'), 'utf8').trim();
  const requestInit = { headers: { authorization: `Bearer ${token}` } };
  const client = new Client({ name: 'cli-host', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
  t.after(() => client.close());
  return { child, client, file, stderr: () => text, exited };
}

const pidOf = async (client: Client, tool: string) =>
  (json(await client.callTool({ name: tool, arguments: {} })) as { pid: number }).pid;

test('SIGHUP reloads the file of a running switchboard; the host session stays open', async (t) => {
  const base = { namespacing: { mode: 'always' }, shutdown: { drainMs: 0 } };
  const sb = await up(t, { ...base, servers: { a: faulty() } }, ['--no-watch']);
  const aPid = await pidOf(sb.client, 'a_pids');
  await writeFile(sb.file, JSON.stringify({ ...base, servers: { a: faulty(), b: faulty() } }));
  sb.child.kill('SIGHUP');
  await eventually('b to join', async () => (await toolNames(sb.client)).includes('b_echo'));
  assert.equal(await pidOf(sb.client, 'a_pids'), aPid, 'the unchanged backend kept its process');
  assert.ok(running(await pidOf(sb.client, 'b_pids')));

  await writeFile(sb.file, JSON.stringify({ ...base, servers: { a: { command: 42 } } }));
  sb.child.kill('SIGHUP');
  await eventually('the refusal to be logged', () => sb.stderr().includes('reload refused'));
  assert.match(sb.stderr(), /switchboard\.json: servers\.a\.command: expected a string/);
  assert.ok((await toolNames(sb.client)).includes('b_echo'), 'the running configuration stays');
  assert.equal(await pidOf(sb.client, 'a_pids'), aPid);
});

test('an edit to the --config file is applied without a signal', async (t) => {
  const base = { namespacing: { mode: 'always' }, shutdown: { drainMs: 0 } };
  const sb = await up(t, { ...base, servers: { a: faulty(), b: faulty() } });
  const bPid = await pidOf(sb.client, 'b_pids');
  await writeFile(sb.file, JSON.stringify({ ...base, servers: { a: faulty() } }));
  await eventually('b to leave', async () => !(await toolNames(sb.client)).includes('b_echo'));
  await eventually('b to be ended', () => !running(bPid));
});

test('a policy file emptied while it is rewritten lifts no rule: the reload is refused until it is whole', async (t) => {
  const base = { namespacing: { mode: 'always' }, shutdown: { drainMs: 0 } };
  const dir = await mkdtemp(join(tmpdir(), 'sb-policy-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const policy = join(dir, 'policy.yaml');
  const deny = 'rules:\n  - { name: no-echo, tools: [echo], backends: [a], effect: deny }\n';
  await writeFile(policy, deny);
  const sb = await up(t, { ...base, policy: { file: policy }, servers: { a: faulty() } });
  const refused = () =>
    sb.client.callTool({ name: 'a_echo', arguments: {} }).then(
      () => false,
      () => true,
    );
  assert.ok(await refused(), 'denied to begin with');
  // As a shell redirect or a slow generator leaves it: truncated, then written a while later.
  await writeFile(policy, '');
  await eventually(
    'the empty file to be refused',
    () => sb.stderr().includes('reload refused') && /policy\.yaml: the file is empty/.test(sb.stderr()),
  );
  assert.ok(await refused(), 'the deny rule still holds');
  await writeFile(policy, '# still denied\n' + deny);
  await eventually('the whole file to be applied', () => /configuration reloaded/.test(sb.stderr()));
  assert.ok(await refused());
});

test('SIGTERM lets a call under way finish, then exits 0 and ends the children', async (t) => {
  const sb = await up(t, { servers: { f: faulty() }, shutdown: { drainMs: 60_000 } });
  const pid = await pidOf(sb.client, 'pids');
  const progress = new Inbox<number>();
  const slow = sb.client.callTool(
    { name: 'slow', arguments: { steps: 5, everyMs: 100 } },
    { onprogress: (p) => progress.push(p.progress) },
  );
  await progress.next();
  sb.child.kill('SIGTERM');
  assert.equal(json(await slow).steps, 5);
  assert.equal(await sb.exited, 0);
  assert.ok(!running(pid), 'the backend was ended');
  assert.doesNotMatch(sb.stderr(), /cut short/);
});

test('SIGTERM cuts what outlasts shutdown.drainMs, says what and where, and exits 1', async (t) => {
  const sb = await up(t, { servers: { f: faulty() }, shutdown: { drainMs: 300 } });
  const pid = await pidOf(sb.client, 'pids');
  const progress = new Inbox<number>();
  const endless = sb.client.callTool(
    { name: 'slow', arguments: { steps: 100_000, everyMs: 50 } },
    { onprogress: (p) => progress.push(p.progress) },
  );
  endless.catch(() => {});
  await progress.next();
  sb.child.kill('SIGTERM');
  assert.equal(await sb.exited, 1);
  assert.match(sb.stderr(), /shutdown cut 1 calls still under way after 300 ms \(1 to f\)/);
  assert.match(sb.stderr(), /cut short: tools\/call f\/slow/);
  await eventually('the backend to be ended', () => !running(pid));
});
