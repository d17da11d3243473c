// /metrics: every family documented in docs/operations.md is there; after host calls the call
// counter moved under the right labels; a tool name a caller made up creates no series of its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectHttp } from '../support/mcp-clients.js';
import { adminScene, example, NOTES } from './helpers.js';

const FAMILIES = [
  'switchboard_calls_total',
  'switchboard_refusals_total',
  'switchboard_call_duration_seconds',
  'switchboard_stage_duration_seconds',
  'switchboard_calls_in_flight',
  'switchboard_calls_queued',
  'switchboard_backend_up',
  'switchboard_backend_state',
  'switchboard_backend_breaker_open',
  'switchboard_backend_replicas',
  'switchboard_backend_replicas_up',
  'switchboard_backend_restarts_total',
  'switchboard_bridge_connections',
  'switchboard_approvals_pending',
  'switchboard_audit_records_written_total',
  'switchboard_audit_records_lost_total',
  'switchboard_audit_write_lag_records',
  'switchboard_audit_failing',
  'switchboard_sessions',
  'process_cpu_user_seconds_total',
  'process_resident_memory_bytes',
  'nodejs_eventloop_lag_seconds',
];

/** `name{labels} value` lines of one family, as label objects with their value. */
function samples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

test('every metric family is exposed, calls are counted by caller kind, server, tool and outcome, and made-up tools add no series', async (t) => {
  const { admin, sb } = await adminScene(t, {
    servers: { notes: example(NOTES) },
    admin: { metrics: { stageSampleEvery: 1 } },
    policy: {
      rules: [
        {
          name: 'no-adding',
          callers: ['host:*'],
          tools: ['add_note'],
          when: { title: { equals: 'secret' } },
          effect: 'deny',
        },
      ],
    },
  });
  const res = await admin('/metrics');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  const before = await res.text();
  for (const family of FAMILIES) assert.match(before, new RegExp(`^# TYPE ${family} `, 'm'), family);
  assert.deepEqual(samples(before, 'switchboard_backend_up'), [{ labels: { server: 'notes' }, value: 1 }]);

  const { client } = await connectHttp(t, sb.http!.url);
  await client.callTool({ name: 'add_note', arguments: { title: 'a', text: 'b' } });
  await client.callTool({ name: 'list_notes', arguments: {} });
  await client.callTool({ name: 'add_note', arguments: { title: 'secret', text: 'x' } }).catch(() => {});
  const madeUp = 'made-up-tool-7d1f0c';
  await client.callTool({ name: madeUp, arguments: {} }).catch(() => {});

  const after = await (await admin('/metrics')).text();
  const calls = samples(after, 'switchboard_calls_total');
  const count = (labels: Record<string, string>) =>
    calls.find((c) => Object.entries(labels).every(([k, v]) => c.labels[k] === v))?.value ?? 0;
  assert.equal(count({ caller_kind: 'host', server: 'notes', tool: 'add_note', outcome: 'ok' }), 1);
  assert.equal(count({ caller_kind: 'host', server: 'notes', tool: 'list_notes', outcome: 'ok' }), 1);
  assert.equal(count({ caller_kind: 'host', server: 'notes', tool: 'add_note', outcome: 'refused' }), 1);
  assert.equal(count({ caller_kind: 'host', tool: '(unknown)', outcome: 'error' }), 1);
  assert.ok(!after.includes(madeUp), 'the made-up name appears in no series');
  const refusals = samples(after, 'switchboard_refusals_total').find((s) => s.labels.reason === 'policy');
  assert.ok((refusals?.value ?? 0) >= 1);
  const notesLatency = samples(after, 'switchboard_call_duration_seconds_count').find(
    (s) => s.labels.server === 'notes',
  );
  assert.ok((notesLatency?.value ?? 0) >= 3);
  const stages = new Set(
    samples(after, 'switchboard_stage_duration_seconds_count').map((s) => s.labels.stage),
  );
  for (const stage of ['observe', 'audit', 'protocol', 'admission', 'resolve', 'policy', 'route'])
    assert.ok(stages.has(stage), `stage ${stage} timed`);
  assert.deepEqual(samples(after, 'switchboard_sessions').find((s) => s.labels.era === 'legacy')?.value, 1);
  // Counts are kept across scrapes: each call once, whichever scrape comes after it.
  await client.callTool({ name: 'add_note', arguments: { title: 'c', text: 'd' } });
  const later = samples(await (await admin('/metrics')).text(), 'switchboard_calls_total');
  const added = later.find(
    (c) => c.labels.server === 'notes' && c.labels.tool === 'add_note' && c.labels.outcome === 'ok',
  );
  assert.equal(added?.value, 2);
  sb.flushAudit();
  const written = samples(await (await admin('/metrics')).text(), 'switchboard_audit_records_written_total');
  assert.ok((written[0]?.value ?? 0) >= 4, 'audit records written are counted');
});

test('stage durations are a sample of every Nth call; call latency covers every call', async (t) => {
  const { admin, sb } = await adminScene(t, {
    servers: { notes: example(NOTES) },
    admin: { metrics: { stageSampleEvery: 5 } },
  });
  const { client } = await connectHttp(t, sb.http!.url);
  const stageCount = async () =>
    samples(await (await admin('/metrics')).text(), 'switchboard_stage_duration_seconds_count').find(
      (s) => s.labels.stage === 'observe',
    )?.value ?? 0;
  const latencyCount = async () =>
    samples(await (await admin('/metrics')).text(), 'switchboard_call_duration_seconds_count').find(
      (s) => s.labels.server === 'notes',
    )?.value ?? 0;
  const stagesBefore = await stageCount();
  const latencyBefore = await latencyCount();
  for (let i = 0; i < 20; i++) await client.callTool({ name: 'list_notes', arguments: {} });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal((await latencyCount()) - latencyBefore, 20, 'every call is in the latency histogram');
  // Every call counts towards the period, listings and the scrapes' own calls included: 20 calls
  // to notes make 4 periods of 5, so 4 or 5 sampled calls fall among them and the calls between.
  const sampled = (await stageCount()) - stagesBefore;
  assert.ok(sampled >= 4 && sampled <= 6, `stages timed in ${sampled} calls, about 1 in 5 of 20`);
});
