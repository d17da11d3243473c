// The workflow controls that change what reaches a backend, each shown against the real fixture
// process: retries only where a repeat is safe (or forced), onError continue, the forEach bound,
// a question to the host, handler steps on the context store and events, a backend running a
// workflow over the real bridge socket, and progress per step.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { connectBridge } from '../../src/public/bridge-client/index.js';
import { queryAudit } from '../../src/trust/audit-read.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { Received } from '../context/helpers.js';
import { probe } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';
import { setup } from './harness.js';

const text = (r: { content?: unknown }) => JSON.stringify(r.content);

test('a step whose tool is not idempotent is tried once despite retry, unless the step forces it', async (t) => {
  const s = await setup(t, {
    workflows: {
      once: {
        steps: [
          {
            id: 'f',
            tool: 'fx_flaky_once',
            args: { key: '"o"', failures: '1' },
            retry: { attempts: 3, backoffMs: 10 },
          },
        ],
      },
      forced: {
        steps: [
          {
            id: 'f',
            tool: 'fx_flaky_once',
            args: { key: '"p"', failures: '1' },
            retry: { attempts: 3, backoffMs: 10, force: true },
          },
        ],
      },
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const once = await client.callTool({ name: 'workflows_once', arguments: {} });
  assert.equal(once.isError, true);
  assert.match(text(once), /step f failed: flaky_once failure 1/);
  const forced = await client.callTool({ name: 'workflows_forced', arguments: {} });
  assert.deepEqual(forced.structuredContent, { f: { attempts: 2 } });
  assert.deepEqual(
    s.lines().filter((l) => l.startsWith('flaky_once')),
    ['flaky_once o 1', 'flaky_once p 1', 'flaky_once p 2'],
    'the unforced step reached the backend once',
  );
});

test('onError continue: the failed step ends with its error, and the steps after it run', async (t) => {
  const s = await setup(t, {
    workflows: {
      cont: {
        steps: [
          { id: 'f', tool: 'fx_flaky_once', args: { key: '"c"', failures: '5' }, onError: 'continue' },
          { id: 'g', tool: 'fx_record', args: { value: '"after " + steps.f.error' }, needs: ['f'] },
        ],
        output: { error: 'steps.f.error', recorded: 'steps.g.data.recorded' },
      },
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const r = await client.callTool({ name: 'workflows_cont', arguments: {} });
  assert.equal(r.isError, undefined, text(r));
  assert.deepEqual(r.structuredContent, {
    error: 'flaky_once failure 1',
    recorded: 'after flaky_once failure 1',
  });
  assert.deepEqual(s.lines(), ['flaky_once c 1', 'record after flaky_once failure 1']);
});

test('forEach keeps at most `concurrency` items under way at once, and its results in item order', async (t) => {
  const s = await setup(t, {
    workflows: {
      each: {
        steps: [
          { id: 'list', tool: 'fx_items', args: { n: '6' } },
          {
            id: 's',
            tool: 'fx_slow_safe',
            forEach: 'steps.list.data.items',
            concurrency: 2,
            args: { ms: '150', tag: 'string(item)' },
            needs: ['list'],
          },
        ],
        output: { tags: 'steps.s.data.map(d, d.tag)' },
      },
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const r = await client.callTool({ name: 'workflows_each', arguments: {} });
  assert.deepEqual(r.structuredContent, { tags: ['1', '2', '3', '4', '5', '6'] });
  let now = 0;
  let most = 0;
  for (const line of s.lines().filter((l) => l.startsWith('slow_safe'))) {
    now += line.endsWith(' start') ? 1 : -1;
    most = Math.max(most, now);
  }
  assert.equal(most, 2, s.lines().join(' | '));
});

test('an ask step puts its question to the host; the answer feeds the next step, and a decline fails the run', async (t) => {
  const s = await setup(t, {
    workflows: {
      pick: {
        input: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
        steps: [
          {
            id: 'q',
            ask: {
              message: '"Pick a color for " + input.who',
              schema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
            },
          },
          { id: 'r', tool: 'fx_record', args: { value: 'steps.q.data.color' }, needs: ['q'] },
        ],
        output: { color: 'steps.r.data.recorded' },
      },
    },
  });
  const asked: string[] = [];
  let action: 'accept' | 'decline' = 'accept';
  const { client } = await connectHttp(t, httpUrl(s.sb), {
    capabilities: { elicitation: { form: {} } },
    setup: (c) =>
      c.setRequestHandler('elicitation/create', (req) => {
        asked.push(String((req.params as { message: unknown }).message));
        return Promise.resolve(
          action === 'accept' ? { action, content: { color: 'teal' } } : { action: 'decline' as const },
        );
      }),
  });
  const r = await client.callTool({ name: 'workflows_pick', arguments: { who: 'Ada' } });
  assert.deepEqual(r.structuredContent, { color: 'teal' });
  assert.deepEqual(asked, ['Pick a color for Ada']);
  action = 'decline';
  const declined = await client.callTool({ name: 'workflows_pick', arguments: { who: 'Bo' } });
  assert.equal(declined.isError, true);
  assert.match(text(declined), /step q failed: the question was answered with decline/);
  assert.deepEqual(s.lines(), ['record teal'], 'nothing after a declined question ran');
});

test('handler steps write the context store and publish events; a server hears the event, and the audit names each', async (t) => {
  const s = await setup(t, {
    servers: { listener: probe('listener', { extra: { bridge: { allow: [] } } }) },
    policy: {
      rules: [{ callers: ['backend:listener'], handlers: ['events.subscribe'], effect: 'allow' }],
    },
    workflows: {
      share: {
        input: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] },
        steps: [
          {
            id: 'put',
            handler: 'context.put',
            args: { scope: '"global"', key: '"note"', value: 'input.note' },
          },
          {
            id: 'get',
            handler: 'context.get',
            args: { scope: '"global"', key: '"note"' },
            needs: ['put'],
          },
          {
            id: 'pub',
            handler: 'events.publish',
            args: { topic: '"notes.new"', data: '{"note": steps.get.data.value}' },
            needs: ['get'],
          },
        ],
        output: {
          value: 'steps.get.data.value',
          version: 'steps.put.data.version',
          delivered: 'steps.pub.data.delivered',
        },
      },
    },
  });
  const env = s.sb.gateway.bridgeEnv!('listener', 0);
  const listener = await connectBridge({ path: s.sb.bridgePath!, token: env.SWITCHBOARD_BRIDGE_TOKEN! });
  t.after(() => listener.close());
  const heard = new Received(listener);
  void listener.request('events.subscribe', { topic: 'notes.*' }).catch(() => {});
  await heard.count('notifications/events/subscribed', 1);

  const { client } = await connectHttp(t, httpUrl(s.sb));
  const r = await client.callTool({ name: 'workflows_share', arguments: { note: 'ship it' } });
  assert.equal(r.isError, undefined, text(r));
  const out = r.structuredContent as { value: string; version: number; delivered: number };
  assert.equal(out.value, 'ship it');
  assert.equal(typeof out.version, 'number');
  assert.equal(out.delivered, 1);
  const [event] = await heard.count('notifications/events/event', 1);
  assert.deepEqual(event?.data, { note: 'ship it' });
  assert.equal(event?.publisher, 'workflow:share');

  s.sb.flushAudit();
  const db = openTrustDb(join(s.dir, 'audit.sqlite'));
  t.after(() => db.close());
  const byMethod = (method: string) => queryAudit(db, { method }).filter((x) => x.callerId === 'share');
  for (const method of ['context.put', 'context.get', 'events.publish']) {
    const [record] = byMethod(method);
    assert.ok(record, `an audit record of the step's ${method}`);
    assert.equal(record.callerKind, 'workflow');
    assert.equal(record.outcome, 'ok');
    assert.equal(record.runFor, 'host:http');
  }
});

test('a backend runs a workflow over the real bridge socket, as its own caller', async (t) => {
  const s = await setup(t, {
    servers: { caller: probe('caller', { extra: { bridge: { allow: ['workflows_sum'] } } }) },
    workflows: {
      sum: {
        input: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
        steps: [{ id: 'a', tool: 'fx_add', args: { a: 'input.n', b: '1' } }],
        output: { sum: 'steps.a.data.sum' },
      },
    },
  });
  const env = s.sb.gateway.bridgeEnv!('caller', 0);
  const bridge = await connectBridge({ path: s.sb.bridgePath!, token: env.SWITCHBOARD_BRIDGE_TOKEN! });
  t.after(() => bridge.close());
  const r = await bridge.request<{ structuredContent?: unknown }>('tools/call', {
    name: 'workflows_sum',
    arguments: { n: 41 },
  });
  assert.deepEqual(r.structuredContent, { sum: 42 });
  s.sb.flushAudit();
  const db = openTrustDb(join(s.dir, 'audit.sqlite'));
  t.after(() => db.close());
  const step = queryAudit(db).find((x) => x.callerKind === 'workflow' && x.callerId === 'sum');
  assert.equal(step?.runFor, 'backend:caller');
});

test('a host that asks for progress hears one notification per finished step', async (t) => {
  const s = await setup(t, {
    workflows: {
      three: {
        steps: [
          { id: 'a', tool: 'fx_add', args: { a: '1', b: '1' } },
          { id: 'b', tool: 'fx_add', args: { a: '2', b: '2' }, needs: ['a'] },
          { id: 'c', tool: 'fx_add', args: { a: '3', b: '3' }, needs: ['b'] },
        ],
      },
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const progress: { progress: number; total?: number; message?: string }[] = [];
  const r = await client.callTool(
    { name: 'workflows_three', arguments: {} },
    { onprogress: (p) => progress.push(p) },
  );
  assert.equal(r.isError, undefined, text(r));
  assert.deepEqual(
    progress.map((p) => [p.progress, p.total]),
    [
      [1, 3],
      [2, 3],
      [3, 3],
    ],
  );
});
