// Threat: one A2A agent reading or steering another's tasks. Switchboard's tasks as an agent are
// kept per caller (the owner is the identity the HTTP front proved), on both bindings and on disk:
// to any other agent a task id that leaked does not exist, and nothing in a request names the owner.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import test from 'node:test';
import Database from 'better-sqlite3';
import { TaskState, type Task } from '@a2a-js/sdk';
import { newApiKey, sha256Hex } from '../../src/front/http-auth.js';
import { messageOf, textPart } from '../../src/a2a/parts.js';
import { probe } from '../gateway/harness.js';
import { startGateway } from '../support/start-switchboard.js';
import { agentClient, asTask, skillCall, type Binding } from '../a2a/agent-clients.js';

const BINDINGS: Binding[] = ['JSONRPC', 'HTTP+JSON'];

test("an agent holding another agent's task id can neither read, list, answer nor cancel it", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-a2a-scope-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'tasks.sqlite');
  const alice = newApiKey();
  const mallory = newApiKey();
  const sb = await startGateway(t, {
    servers: { p: probe('p') },
    http: {
      auth: {
        keys: [
          { name: 'alice', sha256: sha256Hex(alice) },
          { name: 'mallory', sha256: sha256Hex(mallory) },
        ],
      },
    },
    a2a: { serve: { enabled: true, tasks: { path } } },
  });
  const origin = new URL(sb.http!.url).origin;
  // Alice: one finished task and one waiting for her answer, made over each binding.
  const tasks: Task[] = [];
  for (const binding of BINDINGS) {
    const client = await agentClient(origin, binding, alice);
    tasks.push(asTask(await client.sendMessage(skillCall('echo', { secret: 'alice only' }))));
    tasks.push(asTask(await client.sendMessage(skillCall('elicit', { message: 'Which colour?' }))));
  }
  assert.deepEqual(
    tasks.map((x) => x.status?.state),
    [
      TaskState.TASK_STATE_COMPLETED,
      TaskState.TASK_STATE_INPUT_REQUIRED,
      TaskState.TASK_STATE_COMPLETED,
      TaskState.TASK_STATE_INPUT_REQUIRED,
    ],
  );

  for (const binding of BINDINGS) {
    const thief = await agentClient(origin, binding, mallory);
    for (const task of tasks) {
      await assert.rejects(
        thief.getTask({ tenant: '', id: task.id, historyLength: undefined }),
        /not found/i,
        `${binding} get`,
      );
      await assert.rejects(
        thief.cancelTask({ tenant: '', id: task.id, metadata: undefined }),
        /not found/i,
        `${binding} cancel`,
      );
    }
    // Answering alice's question on her task id is not answering it.
    const waiting = tasks[1]!;
    await assert.rejects(
      thief.sendMessage({
        tenant: '',
        message: messageOf('user', [textPart('red')], { taskId: waiting.id, contextId: waiting.contextId }),
        configuration: undefined,
        metadata: undefined,
      }),
      /not found/i,
      `${binding} answer`,
    );
    const listed = await thief.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    assert.ok(!listed.tasks.some((x) => tasks.some((a) => a.id === x.id)), `${binding} list`);
    // A tenant in the path is not an owner either.
    const viaTenant = await fetch(`${origin}/a2a/rest/alice/tasks/${tasks[0]!.id}`, {
      headers: { authorization: `Bearer ${mallory}`, 'a2a-version': '1.0' },
    });
    assert.equal(viaTenant.status, 404);
  }
  // Without credentials nothing is answered at all.
  const anonymous = await fetch(`${origin}/a2a/rest/tasks/${tasks[0]!.id}`, {
    headers: { 'a2a-version': '1.0' },
  });
  assert.equal(anonymous.status, 401);

  // Alice's tasks are as she left them: her waiting task still waits for her.
  const owner = await agentClient(origin, 'HTTP+JSON', alice);
  for (const task of tasks) {
    const got = await owner.getTask({ tenant: '', id: task.id, historyLength: undefined });
    assert.equal(got.status?.state, task.status?.state);
  }
  // On disk every row is owned by the identity the front proved.
  const db = new Database(path, { readonly: true });
  t.after(() => db.close());
  const owners = db.prepare('SELECT DISTINCT owner FROM tasks').all() as { owner: string }[];
  assert.deepEqual(
    owners.map((o) => o.owner),
    ['agent:key:alice'],
  );
});
