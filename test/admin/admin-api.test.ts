// The JSON admin API: the SSE stream delivers a host's call as it ends; a call through the API is a
// call of the caller admin:token through the one pipeline, which a deny rule stops and the audit
// records; status and tools describe the running catalog.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectHttp } from '../support/mcp-clients.js';
import { auditRows } from '../policy/helpers.js';
import { adminScene, example, NOTES } from './helpers.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

test('the call stream (SSE) delivers a call a host made', async (t) => {
  const { admin, sb } = await adminScene(t, { servers: { notes: example(NOTES) } });
  const abort = new AbortController();
  t.after(() => abort.abort());
  const res = await admin('/api/v1/calls/stream', { signal: abort.signal });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const reader = res.body!.getReader();
  const { client } = await connectHttp(t, sb.http!.url, { name: 'streamed-host' });
  await client.callTool({ name: 'list_notes', arguments: {} });
  let text = '';
  const decoder = new TextDecoder();
  let seen: Record<string, unknown> | undefined;
  while (!seen) {
    const { value, done } = await reader.read();
    assert.ok(!done, 'the stream stays open');
    text += decoder.decode(value, { stream: true });
    for (const block of text.split('\n\n')) {
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (!/^event: call$/m.test(block) || !data) continue;
      const call = JSON.parse(data) as Record<string, unknown>;
      if (call.method === 'tools/call') seen = call;
    }
  }
  assert.equal(seen.target, 'list_notes');
  assert.equal(seen.server, 'notes');
  assert.equal(seen.outcome, 'ok');
  assert.match(String(seen.caller), /^host:/);
  assert.ok(!('arguments' in seen) && !('params' in seen), 'no argument values');
  const recent = (await (await admin('/api/v1/calls')).json()) as { calls: { callId: string }[] };
  assert.ok(recent.calls.some((c) => c.callId === seen.callId));
});

test('a call through the admin API runs as admin:token: allowed like a host, stopped by a deny rule, audited', async (t) => {
  const { admin, dir, sb } = await adminScene(t, {
    servers: { notes: example(NOTES) },
    policy: {
      rules: [
        { name: 'admins-read-only', callers: ['admin:*'], tools: ['add_note'], effect: 'deny' },
        { name: 'hosts-ask', callers: ['host:*'], tools: ['add_note'], effect: 'approve' },
      ],
    },
  });
  const post = async (body: unknown) =>
    (await (await admin('/api/v1/call', { method: 'POST', body: JSON.stringify(body) })).json()) as {
      caller: string;
      result?: { content: { text: string }[] };
      error?: { code: number };
    };
  const listed = await post({ tool: 'list_notes' });
  assert.equal(listed.caller, 'admin:token');
  assert.match(listed.result?.content[0]?.text ?? '', /welcome/);
  const denied = await post({ tool: 'add_note', arguments: { title: 't', text: 'x' } });
  assert.ok(denied.error, 'refused');
  assert.equal(denied.result, undefined);
  const rows = auditRows(sb, join(dir, 'audit.sqlite')) as unknown as Record<string, unknown>[];
  const mine = rows.filter((r) => r.method === 'tools/call');
  assert.deepEqual(
    mine.map((r) => [`${String(r.caller_kind)}:${String(r.caller_id)}`, r.target_name, r.decision, r.rule]),
    [
      ['admin:token', 'list_notes', 'allow', 'defaults.admin'],
      ['admin:token', 'add_note', 'deny', 'admins-read-only'],
    ],
  );
  const bad = await admin('/api/v1/call', { method: 'POST', body: 'not json' });
  assert.equal(bad.status, 400);
  // Too large: 413, and the connection closes (the rest of the body is not read as a next request).
  const big = await admin('/api/v1/call', {
    method: 'POST',
    body: JSON.stringify({ tool: 'x'.repeat(2 << 20) }),
  });
  assert.equal(big.status, 413);
  assert.equal(big.headers.get('connection'), 'close');
  assert.equal(((await big.json()) as { error: string }).error, 'too_large');
  assert.equal((await post({ tool: 'list_notes' })).caller, 'admin:token', 'served on');
  // An id whose percent-encoding is broken is the request's fault, not a 500.
  const broken = await admin('/api/v1/approvals/%E0%A4%A/approve', { method: 'POST' });
  assert.equal(broken.status, 400);
});

test('status and tools describe the running switchboard', async (t) => {
  const { admin } = await adminScene(t, { servers: { notes: example(NOTES) } });
  const status = (await (await admin('/api/v1/status')).json()) as {
    backends: { name: string; state: string; breaker: string; replicasUp: number; tools: number }[];
    approvalsPending: number;
  };
  assert.deepEqual(
    status.backends.map((b) => [b.name, b.state, b.breaker, b.replicasUp, b.tools]),
    [['notes', 'ready', 'closed', 1, 2]],
  );
  assert.equal(status.approvalsPending, 0);
  // Audit on keeps the approval store, but no rule asks for approval: the dashboard says so.
  const approvals = (await (await admin('/api/v1/approvals')).json()) as { enabled: boolean };
  assert.equal(approvals.enabled, false);
  const tools = (await (await admin('/api/v1/tools')).json()) as {
    tools: { name: string; backend: string; annotations?: { readOnlyHint?: boolean } }[];
  };
  const list = tools.tools.find((x) => x.name === 'list_notes');
  assert.equal(list?.backend, 'notes');
  assert.equal(list?.annotations?.readOnlyHint, true);
});

test('a server that did not start says why in status and on the topology, in its own (redacted) words', async (t) => {
  const crashing = fileURLToPath(new URL('../fixtures/crashing-server.js', import.meta.url));
  const { admin } = await adminScene(t, {
    servers: { notes: example(NOTES), broken: { ...example(crashing), restart: { initialMs: 60_000 } } },
    redaction: { patterns: ['sk-live-[0-9a-f]+'] },
  });
  type Backend = { name: string; state: string; stderr?: string[] };
  const status = (await (await admin('/api/v1/status')).json()) as { backends: Backend[] };
  const broken = status.backends.find((b) => b.name === 'broken')!;
  assert.notEqual(broken.state, 'ready');
  assert.equal(broken.stderr?.at(-1), 'fatal: cannot continue without a valid API_TOKEN');
  assert.ok(!JSON.stringify(broken.stderr).includes('sk-live'), 'redacted as kept');
  assert.equal(status.backends.find((b) => b.name === 'notes')!.stderr, undefined, 'a ready one has no why');
  const topology = (await (await admin('/api/v1/topology')).json()) as { backends: Backend[] };
  assert.equal(topology.backends.find((b) => b.name === 'broken')!.stderr?.at(-1), broken.stderr?.at(-1));
});
