// Replicas behind switchboard: calls spread by least outstanding requests, a dead replica fails
// only its own calls while the others serve, it comes back by itself, subscriptions move off it,
// and remote replicas (urls) each keep their own session. Nothing is left running afterwards.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import type { Switchboard } from '../../src/switchboard.js';
import { serveExpiring } from '../fixtures/expiring-http-server.js';
import { Inbox, initialize, probe, rawStdio, textJson } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { connect, faulty, hostPid, json, running, toolNames } from './helpers.js';
import { eventually } from '../support/poll.js';

/**
 * A file that, once written, lets every `gate` call waiting on it answer; `sandbox` lets the
 * backend see its directory (its own /tmp is private).
 */
async function gateFile(
  t: TestContext,
): Promise<{ file: string; open: () => Promise<void>; sandbox: { read: string[] } }> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-replicas-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'open');
  return { file, open: () => writeFile(file, ''), sandbox: { read: [dir] } };
}

const pidOf = async (client: Client, tool = 'pids') =>
  json(await client.callTool({ name: tool, arguments: {} })).pid as number;

function outstanding(sb: Switchboard, name = 'f'): number[] {
  return sb.gateway.backends
    .get(name)!
    .status()
    .map((r) => r.outstanding);
}

function states(sb: Switchboard, name = 'f'): string[] {
  return sb.gateway.backends
    .get(name)!
    .status()
    .map((r) => r.state);
}

/** Every pid a run of `n` calls answered from, counted. */
async function pidsOf(client: Client, n: number): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const pid = await pidOf(client);
    counts.set(pid, (counts.get(pid) ?? 0) + 1);
  }
  return counts;
}

test('concurrent calls spread evenly over the replicas, and every replica ends with switchboard', async (t) => {
  const gate = await gateFile(t);
  const sb = await startGateway(t, { servers: { f: faulty([], { replicas: 3, sandbox: gate.sandbox }) } });
  assert.deepEqual(states(sb), ['ready', 'ready', 'ready']);
  const client = await connect(t, sb);
  const calls = Array.from({ length: 6 }, () =>
    client.callTool({ name: 'gate', arguments: { file: gate.file } }),
  );
  await eventually('six calls in flight', () => outstanding(sb).reduce((a, b) => a + b) === 6);
  assert.deepEqual(outstanding(sb), [2, 2, 2], 'least outstanding: two calls on each replica');
  await gate.open();
  const perPid = new Map<number, number>();
  for (const r of await Promise.all(calls)) {
    const pid = json(r).pid as number;
    perPid.set(pid, (perPid.get(pid) ?? 0) + 1);
  }
  assert.deepEqual([...perPid.values()], [2, 2, 2], 'three processes, two calls each');
  assert.deepEqual(outstanding(sb), [0, 0, 0]);

  await client.close();
  await sb.stop();
  await eventually('every replica to be gone', () => [...perPid.keys()].every((pid) => !running(pid)));
});

test('a replica with a call under way is passed over for an idle one', async (t) => {
  const gate = await gateFile(t);
  const sb = await startGateway(t, { servers: { f: faulty([], { replicas: 2, sandbox: gate.sandbox }) } });
  const client = await connect(t, sb);
  const held = client.callTool({ name: 'gate', arguments: { file: gate.file } });
  await eventually('the held call to be in flight', () => outstanding(sb).includes(1));
  const busy = outstanding(sb).indexOf(1);
  const idle = await pidsOf(client, 4);
  assert.equal(idle.size, 1, 'every quick call went to the same replica');
  assert.deepEqual(outstanding(sb)[busy], 1, 'the busy replica got none of them');
  await gate.open();
  const heldPid = json(await held).pid as number;
  assert.ok(!idle.has(heldPid), 'the quick calls went to the other replica');
  // With both idle again, ties go round-robin.
  assert.equal((await pidsOf(client, 4)).size, 2);
});

test('killing a replica fails only its calls, naming it; the others serve and it comes back by itself', async (t) => {
  const gate = await gateFile(t);
  const sb = await startGateway(t, {
    // Each replica announces a list change once up: a restarted one's is its own start, not a change.
    servers: {
      f: faulty(['--announce-at-start'], {
        replicas: 2,
        restart: { initialMs: 1000 },
        sandbox: gate.sandbox,
      }),
    },
  });
  let listChanged = 0;
  const client = await connect(t, sb, () => listChanged++);
  const pids = [...(await pidsOf(client, 2)).keys()];
  assert.equal(pids.length, 2);
  const calls = [0, 1].map(() =>
    client.callTool({ name: 'gate', arguments: { file: gate.file } }).then(
      (r) => ({ pid: json(r).pid as number }),
      (err: Error & { code?: number }) => ({ err }),
    ),
  );
  await eventually('a call on each replica', () => outstanding(sb).join() === '1,1');
  const [victim, survivor] = pids as [number, number];
  process.kill(victim, 'SIGKILL');

  const first = await Promise.race(calls);
  assert.ok('err' in first, 'the first call to end is the one the dead replica held');
  assert.equal(first.err.code, -32001);
  assert.match(first.err.message, /backend f#[01] exited on SIGKILL/);
  assert.deepEqual(outstanding(sb).sort(), [0, 1], "the survivor's call is still under way");

  // The server stays up: its tools stay listed and new calls are served, never by the dead process
  // (by the survivor, or by the replica's new process if it is back already).
  assert.ok((await toolNames(client)).includes('echo'));
  assert.ok(!(await pidsOf(client, 3)).has(victim));
  await gate.open();
  const results = await Promise.all(calls);
  assert.deepEqual(
    results.filter((r) => 'pid' in r),
    [{ pid: survivor }],
    "the survivor's call got its answer",
  );

  await eventually('the dead replica to be back', () => states(sb).every((s) => s === 'ready'));
  const now = [...(await pidsOf(client, 2)).keys()].sort();
  assert.ok(now.includes(survivor));
  assert.ok(!now.includes(victim), 'a new process in its place');
  assert.equal(listChanged, 0, 'hosts never saw the server go away');
  await client.close();
  await sb.stop();
  await eventually('no replica left running', () => now.every((pid) => !running(pid)));
});

test('a subscription stays on the replica that holds it and moves to another when that one dies', async (t) => {
  const sb = await startGateway(t, {
    servers: { f: faulty([], { replicas: 2, restart: { initialMs: 60_000 } }) },
  });
  const client = await connect(t, sb);
  await client.subscribeResource({ uri: 'faulty://r' });
  const seen = new Map<number, unknown>();
  for (let i = 0; i < 2; i++) {
    const s = json(await client.callTool({ name: 'state', arguments: {} }));
    seen.set(s.pid as number, s.subscriptions);
  }
  const holder = [...seen].find(([, subs]) => (subs as string[]).length === 1)?.[0];
  const other = [...seen].find(([, subs]) => (subs as string[]).length === 0)?.[0];
  assert.ok(holder && other, 'exactly one replica holds the subscription');

  process.kill(holder, 'SIGKILL');
  await eventually('the subscription to move to the other replica', async () => {
    const s = json(await client.callTool({ name: 'state', arguments: {} }));
    return s.pid === other && (s.subscriptions as string[]).includes('faulty://r');
  });
  await client.unsubscribeResource({ uri: 'faulty://r' });
  const s = json(await client.callTool({ name: 'state', arguments: {} }));
  assert.deepEqual(s.subscriptions, [], 'the unsubscribe reached the replica that held it');
});

test('remote replicas (urls) share the calls, each with a session of its own', async (t) => {
  const a = await serveExpiring();
  const b = await serveExpiring();
  t.after(() => Promise.all([a.close(), b.close()]));
  const sb = await startGateway(t, { servers: { r: { urls: [a.url, b.url] } } });
  assert.deepEqual(states(sb, 'r'), ['ready', 'ready']);
  const client = await connect(t, sb);
  for (let i = 0; i < 4; i++) await client.callTool({ name: 'whoami', arguments: {} });
  assert.equal(a.calls.length, 2);
  assert.equal(b.calls.length, 2);
  assert.equal(new Set(a.calls).size, 1, 'one session on the first');
  assert.notDeepEqual(a.calls[0], b.calls[0], 'and another on the second');

  b.expire();
  for (let i = 0; i < 4; i++) await client.callTool({ name: 'whoami', arguments: {} });
  assert.equal(b.initializations, 2, 'only the replica that forgot its session opened a new one');
  assert.equal(a.initializations, 1);
  assert.equal(a.calls.length + b.calls.length, 8, 'every call ran once');
});

test("a replica's sampling request reaches the session whose call it is serving", async (t) => {
  const sb = await startGateway(t, { servers: { p: probe('p', { extra: { replicas: 2 } }) } });
  const arrived = new Inbox<string>();
  // Both requests are held until both have arrived: two calls in flight, one on each replica.
  const gate = () => arrived.next(() => arrived.items.length >= 2);
  const host = (who: string) =>
    connectHttp(t, httpUrl(sb), {
      capabilities: { sampling: {} },
      setup: (c) =>
        c.setRequestHandler('sampling/createMessage', async (req) => {
          const content = req.params.messages[0]?.content as { text?: string };
          arrived.push(who);
          await gate();
          return {
            role: 'assistant',
            model: who,
            content: { type: 'text', text: `${who}: ${content.text}` },
          };
        }),
    });
  const [a, b] = await Promise.all([host('a'), host('b')]);
  const [fromA, fromB] = await Promise.all([
    a.client.callTool({ name: 'sample', arguments: { prompt: 'one' } }),
    b.client.callTool({ name: 'sample', arguments: { prompt: 'two' } }),
  ]);
  assert.deepEqual(outstanding(sb, 'p'), [0, 0]);
  assert.deepEqual(textJson(fromA), { server: 'p', answer: 'a: one', model: 'a' });
  assert.deepEqual(textJson(fromB), { server: 'p', answer: 'b: two', model: 'b' });
});

test('every replica calls over the bridge as its server, each with a token of its own', async (t) => {
  const caller = fileURLToPath(new URL('../fixtures/bridge-caller.js', import.meta.url));
  const sb = await startGateway(t, {
    servers: {
      c: { command: process.execPath, args: [caller], replicas: 2, bridge: { allow: ['p_echo'] } },
      p: probe('p'),
    },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  for (let i = 0; i < 2; i++) {
    const answer = textJson(
      await client.callTool({
        name: 'c_relay',
        arguments: { method: 'tools/call', params: { name: 'p_echo', arguments: { i } } },
      }),
    );
    assert.equal(answer.identity, 'c', `call ${i}: ${JSON.stringify(answer)}`);
    assert.ok(!('error' in answer));
  }
  assert.deepEqual(outstanding(sb, 'c'), [0, 0]);
});

test("a host's tasks on a replicated server are polled and read on the replica that made them", async (t) => {
  const { write, inbox } = await rawStdio(t, { servers: { f: faulty([], { replicas: 2 }) } });
  let next = 1;
  const request = async (method: string, params: object) => {
    const id = next++;
    write(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    const m = await inbox.next((x) => x.id === id);
    assert.ok('result' in m, `${method}: ${JSON.stringify(m.error)}`);
    return m.result as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  write(initialize());
  await inbox.next((m) => m.id === 'init');
  write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));

  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    const created = await request('tools/call', { name: 'echo', arguments: {}, task: { ttl: 60_000 } });
    ids.push(created.task.taskId as string);
  }
  // f:task-<pid inside its sandbox>-<n>-<instance>: the backend's own id, namespaced by switchboard.
  const pidOf = (id: string) => hostPid(Number(id.split('-')[1]), id.split('-')[3]);
  assert.equal(new Set(ids.map(pidOf)).size, 2, 'the tasks were made on both replicas');
  for (const taskId of ids) {
    assert.equal((await request('tasks/get', { taskId })).taskId, taskId);
    assert.equal(json(await request('tasks/result', { taskId })).pid, pidOf(taskId));
  }
  const listed = (await request('tasks/list', {})).tasks as { taskId: string }[];
  assert.deepEqual(listed.map((x) => x.taskId).sort(), [...ids].sort());
});
