// Task ownership survives a restart: a host polling a task its backend still runs keeps reaching
// it through a switchboard started again on the same state database, and nobody else does.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import { sha256Hex } from '../../src/front/http-auth.js';
import { initialize, rawPost } from '../gateway/harness.js';
import { serveTasks } from '../fixtures/task-http-server.js';
import { httpUrl, launchSwitchboard } from '../support/start-switchboard.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef' };

/** A legacy HTTP host holding an API key: its session, and one request at a time in it. */
async function keyedHost(url: string, key: string) {
  const auth = { authorization: `Bearer ${key}` };
  const init = await rawPost(url, initialize(), auth);
  const session = init.headers.get('mcp-session-id')!;
  const headers = { ...auth, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
  await rawPost(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
  let next = 1;
  return async (method: string, params: object = {}): Promise<Obj> => {
    const id = next++;
    const res = await rawPost(url, JSON.stringify({ jsonrpc: '2.0', id, method, params }), headers);
    return res.messages.find((m) => m.id === id) as Obj;
  };
}

async function stateDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-state-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('a task polled across a restart still answers its owner, and only its owner', async (t) => {
  const backend = await serveTasks();
  t.after(() => backend.close());
  const dir = await stateDir(t);
  const config: ConfigInput = {
    servers: { work: { url: backend.url } },
    state: { path: join(dir, 'state.sqlite') },
    audit: { enabled: false },
    pinning: { enabled: false },
    http: {
      auth: { keys: Object.entries(KEYS).map(([name, key]) => ({ name, sha256: sha256Hex(key) })) },
    },
  };

  const first = await launchSwitchboard(config);
  const alice = await keyedHost(httpUrl(first), KEYS.alice);
  const created = await alice('tools/call', {
    name: 'job',
    arguments: { text: 'hi' },
    task: { ttl: 600_000 },
  });
  const taskId = created.result.task.taskId as string;
  assert.equal(taskId, 'work:task-1');
  assert.equal((await alice('tasks/get', { taskId })).result.status, 'working');
  await first.stop();

  // A new process on the same state database: Alice's new session is the same caller.
  const second = await launchSwitchboard(config);
  t.after(() => second.stop());
  const url = httpUrl(second);
  const aliceAgain = await keyedHost(url, KEYS.alice);
  const bob = await keyedHost(url, KEYS.bob);

  const polled = await aliceAgain('tasks/get', { taskId });
  assert.equal(polled.result.taskId, taskId);
  assert.equal(polled.result.status, 'working');
  // Bob gets what an id that never existed gets, for every way of reaching the task.
  const never = await bob('tasks/get', { taskId: 'work:task-99' });
  for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
    const refused = await bob(method, { taskId });
    assert.equal(refused.error?.code, -32602, method);
    assert.equal(refused.error.message, never.error.message.replace('work:task-99', taskId), method);
  }
  assert.deepEqual((await bob('tasks/list')).result.tasks, []);
  assert.deepEqual(
    (await aliceAgain('tasks/list')).result.tasks.map((x: Obj) => x.taskId),
    [taskId],
  );

  await aliceAgain('tools/call', { name: 'finish', arguments: { taskId: 'task-1' } });
  assert.equal((await aliceAgain('tasks/get', { taskId })).result.status, 'completed');
  const done = await aliceAgain('tasks/result', { taskId });
  assert.deepEqual(done.result.content, [{ type: 'text', text: 'done:hi' }]);
  assert.equal(done.result._meta['io.modelcontextprotocol/related-task'].taskId, taskId);
});
