// Tasks across the mesh: a task-augmented call from a host on node A to a task-running backend
// that nodes B and C both serve; tasks/get, tasks/result and tasks/cancel from A reach the node
// that holds the task, the same backend task id on two nodes stays two tasks, and tasks/list
// lists the caller's tasks of both nodes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { NO_NATS, nodeKeys, startNats, type Nats } from '../support/nats.js';
import { eventually } from '../support/poll.js';
import { launchSwitchboard } from '../support/start-switchboard.js';

const TASK_SERVER = fileURLToPath(new URL('../fixtures/task-server.js', import.meta.url));
const HOST = { kind: 'host', id: 'tester' } as const;
const keys = { a: nodeKeys(), b: nodeKeys(), c: nodeKeys() };
const trust = { a: keys.a.publicKey, b: keys.b.publicKey, c: keys.c.publicKey };

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('tasks across the mesh', { skip: NO_NATS, timeout: 120_000 }, () => {
  let nats: Nats;
  const nodes: Switchboard[] = [];
  let a: Switchboard;

  const nodeConfig = (name: 'a' | 'b' | 'c', servers: ConfigInput['servers']): ConfigInput =>
    ({
      servers,
      audit: { enabled: false },
      pinning: { enabled: false },
      namespacing: { mode: 'always' },
      mesh: {
        enabled: true,
        servers: [nats.url],
        node: name,
        key: keys[name].privateKey,
        trust,
        heartbeatMs: 200,
      },
    }) as ConfigInput;

  const call = (method: string, params: object, caller: { kind: 'host'; id: string } = HOST) =>
    a.gateway.dispatch(caller, method, params as Obj) as Promise<Obj>;

  before(async () => {
    nats = await startNats();
    for (const name of ['b', 'c'] as const) {
      const jobs = { command: process.execPath, args: [TASK_SERVER, '--name', `jobs-${name}`] };
      nodes.push(await launchSwitchboard(nodeConfig(name, { jobs })));
    }
    a = await launchSwitchboard(nodeConfig('a', {}));
    nodes.push(a);
    // Both nodes, not only the first heard: the tests below spread tasks over the two.
    await eventually('a sees the jobs server on b and c', async () => {
      const r = await call('tools/list', {});
      const live = a.mesh!.liveNodes();
      return (
        (r.tools as { name: string }[]).some((t) => t.name === 'jobs_job') &&
        live.includes('b') &&
        live.includes('c')
      );
    });
  });
  after(async () => {
    for (const sb of nodes) await sb.stop();
    await nats.stop();
  });

  it('reaches the node holding each task with tasks/get, tasks/result and tasks/cancel', async () => {
    // Four tasks: balancing spreads them over b and c, whose backends each count from task-1.
    const made: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await call('tools/call', {
        name: 'jobs_job',
        arguments: { text: `t${i}` },
        task: { ttl: 60_000 },
      });
      assert.equal(r.task.status, 'working', JSON.stringify(r));
      made.push(r.task.taskId as string);
    }
    assert.equal(new Set(made).size, 4, `four distinct task ids: ${made.join(', ')}`);
    for (const id of made) assert.equal((await call('tasks/get', { taskId: id })).status, 'working');

    // Finish the first one on its own node (the finish tool takes the backend's own id), read its result.
    const first = made[0]!;
    const own = /task-\d+$/.exec(first)![0];
    await eventually('the first task completes', async () => {
      // Called on the node holding the task: by balancing from A it could finish the other
      // node's task of the same own id.
      const holder = nodes[first.includes(':b~') ? 0 : 1]!;
      await holder.gateway.dispatch(HOST, 'tools/call', { name: 'jobs_finish', arguments: { taskId: own } });
      return (await call('tasks/get', { taskId: first })).status === 'completed';
    });
    const done = await call('tasks/result', { taskId: first });
    assert.match(JSON.stringify(done.content), /t0/);

    const cancelled = await call('tasks/cancel', { taskId: made[3]! });
    assert.equal(cancelled.status, 'cancelled');
    assert.equal((await call('tasks/get', { taskId: made[3]! })).status, 'cancelled');
    assert.equal((await call('tasks/get', { taskId: made[2]! })).status, 'working');
  });

  it('lists with tasks/list the caller’s tasks of every node serving the server', async () => {
    const nodesOf = (ids: Iterable<string>) => new Set([...ids].map((id) => /:([a-z])~/.exec(id)?.[1]));
    // Tasks on both nodes: made until balancing has put at least one on each.
    const made = new Set<string>();
    for (let i = 0; i < 20 && nodesOf(made).size < 2; i++) {
      const r = await call('tools/call', {
        name: 'jobs_job',
        arguments: { text: `listed ${i}` },
        task: { ttl: 60_000 },
      });
      made.add(r.task.taskId as string);
    }
    assert.deepEqual(nodesOf(made), new Set(['b', 'c']), `tasks on both nodes: ${[...made].join(', ')}`);
    const listed = new Set(((await call('tasks/list', {})).tasks as Obj[]).map((t) => t.taskId as string));
    for (const id of made) assert.ok(listed.has(id), `${id} listed; the list: ${[...listed].join(', ')}`);
    assert.deepEqual(nodesOf(listed), new Set(['b', 'c']));
    const theirs = (await call('tasks/list', {}, { kind: 'host', id: 'intruder' })).tasks as Obj[];
    assert.deepEqual(theirs, [], 'another caller lists none of them');
  });

  it('keeps another caller away from a task made across the mesh', async () => {
    const r = await call('tools/call', {
      name: 'jobs_job',
      arguments: { text: 'mine' },
      task: { ttl: 60_000 },
    });
    await assert.rejects(call('tasks/get', { taskId: r.task.taskId }, { kind: 'host', id: 'intruder' }));
  });
});
