// A workflow run task shared over the mesh (mesh.state jetstream) is still its caller's alone: a
// host on node B holding the id of a task node A's host started (sniffed, guessed, leaked) can
// neither read it, nor wait for its result, nor cancel it, nor see it listed; B answers exactly as
// for an id that never existed, while the owner, on B too, reaches it. A caller only its node
// knows (a stdio host, anonymous HTTP) is another principal on another node, of the same name or
// not: B's stdio host does not own A's stdio host's task.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import { fixture } from '../workflows/harness.js';
import { meshStateConfig, rawHost } from '../support/mesh-state-nodes.js';
import { NO_NATS, startNats, type Nats } from '../support/nats.js';
import { until } from '../support/poll.js';
import { httpUrl, launchSwitchboard } from '../support/start-switchboard.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const KEYS = { alice: 'alice-key-0123456789abcdef', mallory: 'mallory-key-0123456789abcdef' };

describe("another host's workflow task across the mesh", { skip: NO_NATS, timeout: 120_000 }, () => {
  let nats: Nats;
  before(async () => {
    nats = await startNats({ jetStream: mkdtempSync(join(tmpdir(), 'sb-js-')) });
  });
  after(async () => {
    await nats.stop();
  });

  it("a host on node B cannot read, await, cancel or list node A's host's workflow task", async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-mesh-task-owner-'));
    const config = (node: string) =>
      meshStateConfig({
        nats: nats.url,
        node,
        dir,
        keys: KEYS,
        extra: {
          servers: { fx: fixture(join(dir, 'journal.log')) },
          workflows: {
            long: { steps: [{ id: 'wait', tool: 'fx_slow_safe', args: { ms: '600000', tag: '"long"' } }] },
          },
        },
      }) as ConfigInput;
    const a = await launchSwitchboard(config('a'));
    t.after(() => a.stop());
    const b = await launchSwitchboard(config('b'));
    t.after(() => b.stop());

    const alice = await rawHost(httpUrl(a), KEYS.alice);
    const created = await alice.call('tools/call', {
      name: 'workflows_long',
      arguments: {},
      task: { ttl: 600_000 },
    });
    const taskId = created.result?.task?.taskId as string;
    assert.match(taskId ?? '', /^workflows:run-/, JSON.stringify(created));

    // The owner reaches it through b: b knows the task (so what follows is b refusing, not b not knowing).
    const aliceOnB = await rawHost(httpUrl(b), KEYS.alice);
    let last: unknown;
    await until(
      async () => {
        const got = await aliceOnB.call('tasks/get', { taskId });
        last = got;
        return got.result?.status === 'working' || undefined;
      },
      () => `the owner's task on b (b last answered ${JSON.stringify(last)})`,
      { timeoutMs: 30_000 },
    );

    const mallory = await rawHost(httpUrl(b), KEYS.mallory);
    const nobody = `workflows:run-00000000-0000-4000-8000-000000000000`;
    const unknown = await mallory.call('tasks/get', { taskId: nobody });
    const asUnknown = (e: Obj) => ({ code: e.code, message: String(e.message).replace(taskId, nobody) });
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      const res = await mallory.call(method, { taskId });
      assert.equal(res.result, undefined, `${method} answered mallory: ${JSON.stringify(res.result)}`);
      assert.deepEqual(
        asUnknown(res.error),
        unknown.error,
        `${method} on another's task differs from an unknown id`,
      );
    }
    const listed = await mallory.call('tasks/list', {});
    assert.deepEqual(listed.result?.tasks, []);

    // Mallory's cancel did nothing: the owner's run is still under way, and listed for the owner.
    const still = await aliceOnB.call('tasks/get', { taskId });
    assert.equal(still.result?.status, 'working');
    const own = await aliceOnB.call('tasks/list', {});
    assert.deepEqual(
      (own.result?.tasks as Obj[]).map((x) => x.taskId),
      [taskId],
    );
  });

  it("node B's stdio host is not node A's: the same caller name on another node owns nothing there", async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-mesh-task-local-'));
    const config = (node: string) =>
      meshStateConfig({
        nats: nats.url,
        node,
        dir,
        extra: {
          servers: { fx: fixture(join(dir, 'journal.log')) },
          workflows: {
            long: { steps: [{ id: 'wait', tool: 'fx_slow_safe', args: { ms: '600000', tag: '"long"' } }] },
          },
        },
      }) as ConfigInput;
    const a = await launchSwitchboard(config('a'));
    t.after(() => a.stop());
    const b = await launchSwitchboard(config('b'));
    t.after(() => b.stop());
    // In-process stand-ins for each node's stdio host: the caller host:stdio on both.
    const STDIO = { kind: 'host', id: 'stdio' } as const;
    const on = (sb: typeof a) => (method: string, params: Obj) =>
      sb.gateway.dispatch(STDIO, method, params).then(
        (result) => ({ result: result as Obj, error: undefined }),
        (error: unknown) => ({ result: undefined, error: error as Obj }),
      );
    const onA = on(a);
    const onB = on(b);
    const created = await onA('tools/call', {
      name: 'workflows_long',
      arguments: {},
      task: { ttl: 600_000 },
    });
    const taskId = created.result?.task?.taskId as string;
    assert.match(taskId ?? '', /^workflows:run-/, JSON.stringify(created));
    // b knows the task, as a's stdio host's (`host:stdio@a`, the name the mesh gives that caller on
    // b): what follows is b refusing another principal, not b not knowing the task.
    const aStdioOnB = { kind: 'host', id: 'stdio@a' } as const;
    await until(
      () =>
        b.gateway.dispatch(aStdioOnB, 'tasks/get', { taskId }).then(
          (r) => ((r as Obj).status === 'working' ? true : undefined),
          () => undefined,
        ),
      "b to know a's stdio host's task",
    );
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const res = await onB(method, { taskId });
      assert.equal(res.result, undefined, `${method} answered b's stdio host: ${JSON.stringify(res.result)}`);
    }
    assert.deepEqual((await onB('tasks/list', {})).result?.tasks ?? [], []);
    // Untouched, and still a's stdio host's.
    assert.equal((await onA('tasks/get', { taskId })).result?.status, 'working');
  });
});
