// Every step kind and control feature of a workflow, run through a real switchboard against a
// real stdio backend, called as a host would (HTTP) and in process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Result } from '../../src/jsonrpc/message.js';
import { RUN_META } from '../../src/workflows/engine.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';
import { setup } from './harness.js';

const host = { kind: 'host', id: 'test' } as const;

test('a workflow is a tool with its input schema and annotations derived from its steps', async (t) => {
  const { sb } = await setup(t, {
    workflows: {
      reads: {
        description: 'only reads',
        steps: [
          { id: 'a', tool: 'fx_add', args: { a: '1', b: '2' } },
          { id: 'd', resource: '"fx+wf://doc"' },
        ],
      },
      writes: {
        input: { type: 'object', properties: { v: { type: 'string' } }, required: ['v'] },
        steps: [
          { id: 'a', tool: 'fx_add', args: { a: '1', b: '2' } },
          { id: 'r', tool: 'fx_record', args: { value: 'input.v' } },
        ],
      },
      wipes: {
        steps: [
          { id: 'w', tool: 'fx_wipe' },
          { id: 'f', tool: 'fx_flaky', args: { key: '"k"', failures: '0' } },
        ],
      },
    },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const tools = (await client.listTools()).tools;
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  assert.equal(byName.get('workflows_reads')?.description, 'only reads');
  assert.deepEqual(byName.get('workflows_reads')?.annotations, {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  });
  assert.deepEqual(byName.get('workflows_writes')?.annotations, {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  });
  assert.deepEqual(byName.get('workflows_writes')?.inputSchema.required, ['v']);
  assert.deepEqual(byName.get('workflows_wipes')?.annotations, {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true,
  });
});

test('arguments are checked against the input schema before any step runs', async (t) => {
  const s = await setup(t, {
    workflows: {
      w: {
        input: { type: 'object', properties: { v: { type: 'string', minLength: 2 } }, required: ['v'] },
        steps: [{ id: 'r', tool: 'fx_record', args: { value: 'input.v' } }],
      },
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const bad = await client.callTool({ name: 'workflows_w', arguments: { v: 'x' } });
  assert.equal(bad.isError, true);
  assert.match(JSON.stringify(bad.content), /Invalid arguments.*must NOT have fewer than 2 characters/);
  assert.deepEqual(s.lines(), []);
  const good = await client.callTool({ name: 'workflows_w', arguments: { v: 'xy' } });
  assert.equal(good.isError, undefined, JSON.stringify(good));
  assert.deepEqual(s.lines(), ['record xy']);
});

test('tool, resource, prompt, handler and nested workflow steps feed each other through expressions', async (t) => {
  const s = await setup(t, {
    vault: { keys: { k: { type: 'hmac-sha256', secret: 'a-long-enough-test-secret-value' } } },
    policy: { rules: [{ callers: ['workflow:*'], handlers: ['vault.sign'], effect: 'allow' }] },
    workflows: {
      double: {
        input: { type: 'object', properties: { n: { type: 'integer' } } },
        steps: [{ id: 'd', tool: 'fx_add', args: { a: 'input.n', b: 'input.n' } }],
        output: { value: 'steps.d.data.sum' },
      },
      all: {
        input: { type: 'object', properties: { n: { type: 'integer' }, who: { type: 'string' } } },
        steps: [
          { id: 'sum', tool: 'fx_add', args: { a: 'input.n', b: '10' } },
          { id: 'doc', resource: '"fx+wf://doc"' },
          { id: 'hi', prompt: 'fx_greet', args: { who: 'input.who' } },
          { id: 'twice', workflow: 'double', args: { n: 'steps.sum.data.sum' }, needs: ['sum'] },
          {
            id: 'sig',
            handler: 'vault.sign',
            args: { key: '"k"', data: 'string(steps.twice.data.value)' },
            needs: ['twice'],
          },
          { id: 'skipped', tool: 'fx_record', args: { value: '"never"' }, if: 'input.n > 100' },
        ],
        output: {
          sum: 'steps.sum.data.sum',
          title: 'steps.doc.data.title',
          greeting: 'steps.hi.text',
          twice: 'steps.twice.data.value',
          signed: 'size(steps.sig.data.signature) > 0',
          skipped: 'steps.skipped.skipped',
        },
      },
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const r = await client.callTool({ name: 'workflows_all', arguments: { n: 5, who: 'Ada' } });
  assert.equal(r.isError, undefined, JSON.stringify(r));
  assert.deepEqual(r.structuredContent, {
    sum: 15,
    title: 'the doc',
    greeting: 'Hello, Ada!',
    twice: 30,
    signed: true,
    skipped: true,
  });
  assert.ok(!s.lines().includes('record never'));
  // The run and its steps are kept.
  const run = (r._meta as Record<string, string>)[RUN_META]!;
  const store = s.sb.workflows!;
  assert.ok(store);
  // In process, through the same pipeline.
  const again = (await s.sb.gateway.dispatch(host as never, 'tools/call', {
    name: 'workflows_double',
    arguments: { n: 4 },
  })) as Result;
  assert.deepEqual(again.structuredContent, { value: 8 });
  assert.match(run, /^run-/);
});

test('independent steps run side by side; forEach runs items with bounded concurrency', async (t) => {
  const s = await setup(t, {
    workflows: {
      par: {
        steps: [
          { id: 'a', tool: 'fx_slow_safe', args: { ms: '300', tag: '"a"' } },
          { id: 'b', tool: 'fx_slow_safe', args: { ms: '300', tag: '"b"' } },
          { id: 'c', tool: 'fx_record', args: { value: '"after"' }, needs: ['a', 'b'] },
        ],
      },
      each: {
        steps: [
          { id: 'list', tool: 'fx_items', args: { n: '5' } },
          {
            id: 'sq',
            tool: 'fx_add',
            forEach: 'steps.list.data.items',
            concurrency: 2,
            args: { a: 'item', b: 'index' },
            needs: ['list'],
          },
        ],
        output: { sums: 'steps.sq.data.map(d, d.sum)' },
      },
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  await client.callTool({ name: 'workflows_par', arguments: {} });
  const lines = s.lines();
  // Both slow steps started before either ended; the dependent step came after both.
  const firstEnd = lines.findIndex((l) => l.endsWith(' end'));
  assert.ok(
    lines.indexOf('slow_safe a start') < firstEnd && lines.indexOf('slow_safe b start') < firstEnd,
    lines.join('|'),
  );
  assert.equal(lines.at(-1), 'record after');
  const r = await client.callTool({ name: 'workflows_each', arguments: {} });
  assert.deepEqual(r.structuredContent, { sums: [1, 3, 5, 7, 9] });
});

test('retries idempotent steps with backoff, not others unless forced; onError continue and defaults', async (t) => {
  const s = await setup(t, {
    workflows: {
      retried: {
        steps: [
          {
            id: 'f',
            tool: 'fx_flaky',
            args: { key: '"r"', failures: '2' },
            retry: { attempts: 3, backoffMs: 10 },
          },
        ],
      },
      short: {
        steps: [
          {
            id: 'f',
            tool: 'fx_flaky',
            args: { key: '"s"', failures: '5' },
            retry: { attempts: 2, backoffMs: 10 },
          },
        ],
      },
      fallback: {
        steps: [
          { id: 'f', tool: 'fx_flaky', args: { key: '"d"', failures: '5' }, default: { attempts: -1 } },
          { id: 'g', tool: 'fx_add', args: { a: 'steps.f.data.attempts', b: '1' }, needs: ['f'] },
        ],
        output: { g: 'steps.g.data.sum', error: 'steps.f.error' },
      },
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const ok = await client.callTool({ name: 'workflows_retried', arguments: {} });
  assert.deepEqual(ok.structuredContent, { f: { attempts: 3 } });
  const failed = await client.callTool({ name: 'workflows_short', arguments: {} });
  assert.equal(failed.isError, true);
  assert.match(JSON.stringify(failed.content), /Workflow \w+ failed: step f failed: flaky failure 2/);
  const fb = await client.callTool({ name: 'workflows_fallback', arguments: {} });
  assert.deepEqual(fb.structuredContent, { g: 0, error: 'flaky failure 1' });
});

test('a step past its timeout is cancelled and fails the run', async (t) => {
  const s = await setup(t, {
    workflows: {
      slow: { steps: [{ id: 's', tool: 'fx_slow_once', args: { ms: '20000', tag: '"t"' }, timeoutMs: 300 }] },
    },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const r = await client.callTool({ name: 'workflows_slow', arguments: {} });
  assert.equal(r.isError, true);
  assert.match(JSON.stringify(r.content), /did not end within 300 ms/);
});

test('a step may be named like a JavaScript object member ("toString", "__proto__") and still runs', async (t) => {
  const s = await setup(t, {
    workflows: {
      named: {
        steps: [
          { id: 'toString', tool: 'fx_add', args: { a: '1', b: '2' } },
          { id: '__proto__', tool: 'fx_add', args: { a: '3', b: '4' }, needs: ['toString'] },
          { id: 'after', tool: 'fx_add', args: { a: '0', b: '0' }, needs: ['__proto__'] },
        ],
      },
    },
  });
  const r = (await s.sb.gateway.dispatch(host as never, 'tools/call', {
    name: 'workflows_named',
    arguments: {},
  })) as Result;
  const steps = r.structuredContent as Record<string, { sum?: number } | undefined>;
  assert.deepEqual(Object.keys(steps).sort(), ['__proto__', 'after', 'toString']);
  assert.equal(steps['toString']?.sum, 3);
  assert.equal(Object.getOwnPropertyDescriptor(steps, '__proto__')?.value?.sum, 7);
});
