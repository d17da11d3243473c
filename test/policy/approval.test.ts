// Human approval through a real switchboard: the host is asked by elicitation when it can answer,
// an operator through `switchboard approvals` (another process, the same SQLite file) when it
// cannot; a decline, an expiry or a cancellation each end the call without reaching the target.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { probe, textOf } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { configFor, httpUrl, startGateway } from '../support/start-switchboard.js';
import { CLI, SHIFTING, captureIo, tempDbPath } from '../trust/helpers.js';
import { runPins } from '../../src/cli/pins.js';
import { runApprovals } from '../../src/cli/approvals.js';
import { ApprovalStore, bindingOf, type ApprovalRecord } from '../../src/trust/approval-store.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { until } from '../support/poll.js';
import { auditRows } from './helpers.js';
import { fileURLToPath } from 'node:url';

const BRIDGE_CALLER = fileURLToPath(new URL('../fixtures/bridge-caller.js', import.meta.url));

const run = promisify(execFile);
const TWO = { a: probe('a'), b: probe('b') };
const APPROVE_ECHO = [
  { name: 'ask-for-echo', backends: ['a'], tools: ['echo', 'touch'], effect: 'approve' as const },
];

/** The one pending approval of a file, once it is there. */
async function pendingOf(path: string): Promise<ApprovalRecord> {
  return until(() => {
    const db = openTrustDb(path);
    try {
      return new ApprovalStore(db).pending()[0];
    } finally {
      db.close();
    }
  });
}

function recordOf(path: string, id: string): ApprovalRecord {
  const db = openTrustDb(path);
  try {
    return new ApprovalStore(db).get(id)!;
  } finally {
    db.close();
  }
}

test('a host that takes elicitation is asked, bound to the exact call; its accept lets the call through once', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, { servers: TWO, audit: { path }, policy: { rules: APPROVE_ECHO } });
  const asked: Record<string, unknown>[] = [];
  const { client } = await connectHttp(t, httpUrl(sb), {
    capabilities: { elicitation: { form: {} } },
    setup: (c) =>
      c.setRequestHandler('elicitation/create', async (req) => {
        asked.push(req.params as Record<string, unknown>);
        return { action: 'accept', content: { approve: true } };
      }),
  });
  const result = await client.callTool({ name: 'a_echo', arguments: { path: '/notes/x' } });
  assert.match(textOf(result), /"path":"\/notes\/x"/);
  assert.equal(asked.length, 1);
  const message = String(asked[0]!.message);
  assert.match(message, /host:http wants to call tool "echo" of server "a"/);
  assert.match(message, /\{"path":"\/notes\/x"\}/);
  assert.match(message, /ask-for-echo/);
  const meta = (asked[0]!._meta as Record<string, { sha256: string }>)['io.switchboard/approval']!;
  assert.equal(
    meta.sha256,
    bindingOf({
      caller: 'host:http',
      method: 'tools/call',
      backend: 'a',
      target: 'echo',
      arguments: { path: '/notes/x' },
    }),
  );
  // Not a standing permission: the same call asks again.
  await client.callTool({ name: 'a_echo', arguments: { path: '/notes/x' } });
  assert.equal(asked.length, 2);
  // Calls no rule asks about are not held up.
  await client.callTool({ name: 'b_echo', arguments: {} });
  assert.equal(asked.length, 2);
  const rows = auditRows(sb, path).filter((r) => r.method === 'tools/call');
  assert.deepEqual(
    rows.map((r) => [r.target_name, r.decision, r.rule]),
    [
      ['echo', 'approve', 'ask-for-echo'],
      ['echo', 'approve', 'ask-for-echo'],
      ['echo', 'allow', 'defaults.host'],
    ],
  );
});

test("a host's decline fails the call with an error naming the rule, and the backend never sees it", async (t) => {
  const sb = await startGateway(t, { servers: TWO, policy: { rules: APPROVE_ECHO } });
  const answers = [
    { action: 'decline' },
    { action: 'accept', content: { approve: false } },
    { action: 'cancel' },
  ];
  const { client } = await connectHttp(t, httpUrl(sb), {
    capabilities: { elicitation: { form: {} } },
    setup: (c) => c.setRequestHandler('elicitation/create', async () => answers.shift() as never),
  });
  for (let i = 0; i < 3; i++) {
    const refused = await client.callTool({ name: 'a_touch', arguments: {} }).catch((e: Error) => e);
    assert.ok(refused instanceof Error, `call ${i} went through`);
    assert.match(refused.message, /declined by the host \(policy rule ask-for-echo\)/);
  }
  const counter = await client.readResource({ uri: 'a+probe://a/counter' });
  assert.deepEqual(
    counter.contents.map((c) => (c as { text: string }).text),
    ['a counter 0'],
  );
});

test('without elicitation an operator approves from another process, and the call goes on', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: TWO,
    audit: { path },
    policy: { rules: APPROVE_ECHO, approval: { pollMs: 50 } },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const call = client.callTool({ name: 'a_echo', arguments: { n: 1 } });
  const pending = await pendingOf(path);
  assert.equal(pending.caller, 'host:http');
  assert.equal(pending.exposed, 'a_echo');
  assert.equal(pending.args, '{"n":1}');
  const listed = captureIo();
  assert.equal(await runApprovals(['list', '--db', path], listed.io), 0);
  assert.match(
    listed.out.join('\n'),
    new RegExp(`${pending.id} {2}host:http -> tools/call a_echo \\(echo of a\\)`),
  );
  const approved = await run(process.execPath, [CLI, 'approvals', 'approve', pending.id, '--db', path]);
  assert.match(approved.stdout, new RegExp(`${pending.id}: approved`));
  assert.match(textOf(await call), /"n":1/);
  assert.equal(recordOf(path, pending.id).status, 'used');
});

test('an approve rule a reload adds asks the operator, as one there from the start does', async (t) => {
  const path = await tempDbPath(t);
  const input = { servers: TWO, audit: { path }, policy: { approval: { pollMs: 50 } } };
  const sb = await startGateway(t, input);
  const { client } = await connectHttp(t, httpUrl(sb));
  await client.callTool({ name: 'a_echo', arguments: { n: 0 } });
  await sb.reload(configFor({ ...input, policy: { ...input.policy, rules: APPROVE_ECHO } }));
  const call = client.callTool({ name: 'a_echo', arguments: { n: 1 } });
  const pending = await pendingOf(path);
  assert.equal(pending.exposed, 'a_echo');
  await run(process.execPath, [CLI, 'approvals', 'approve', pending.id, '--db', path]);
  assert.match(textOf(await call), /"n":1/);
});

test("an operator's deny fails the call with an error naming the rule", async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: TWO,
    audit: { path },
    policy: { rules: APPROVE_ECHO, approval: { pollMs: 50 } },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const call = client.callTool({ name: 'a_echo', arguments: {} }).catch((e: Error) => e);
  const pending = await pendingOf(path);
  await run(process.execPath, [CLI, 'approvals', 'deny', pending.id, '--db', path]);
  const refused = await call;
  assert.ok(refused instanceof Error);
  assert.match(refused.message, /declined by an operator \(policy rule ask-for-echo/);
});

test('an approval nobody gives expires: the call fails saying so, and the approval can no longer be given', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: TWO,
    audit: { path },
    policy: { rules: APPROVE_ECHO, approval: { timeoutMs: 1000, pollMs: 50 } },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const refused = await client.callTool({ name: 'a_echo', arguments: {} }).catch((e: Error) => e);
  assert.ok(refused instanceof Error);
  assert.match(refused.message, /was not approved within 1000 ms .*approval expired/);
  const id = /approval ([0-9a-f]{16})/.exec(refused.message)![1]!;
  assert.equal(recordOf(path, id).status, 'expired');
  const late = captureIo();
  assert.equal(await runApprovals(['approve', id, '--db', path], late.io), 1);
  assert.match(late.err.join('\n'), /expired/);
});

test('cancelling a call withdraws its pending approval', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: TWO,
    audit: { path },
    policy: { rules: APPROVE_ECHO, approval: { pollMs: 50 } },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const controller = new AbortController();
  const call = client
    .callTool({ name: 'a_echo', arguments: {} }, { signal: controller.signal })
    .catch((e: Error) => e);
  const pending = await pendingOf(path);
  controller.abort();
  await call;
  await until(() => (recordOf(path, pending.id).status === 'withdrawn' ? true : undefined));
  const late = captureIo();
  assert.equal(await runApprovals(['approve', pending.id, '--db', path], late.io), 1);
  assert.match(late.err.join('\n'), /cancelled/);
});

test('with operator approval off and a host that cannot answer, the call is refused at once', async (t) => {
  const sb = await startGateway(t, {
    servers: TWO,
    policy: { rules: APPROVE_ECHO, approval: { operator: false } },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const refused = await client.callTool({ name: 'a_echo', arguments: {} }).catch((e: Error) => e);
  assert.ok(refused instanceof Error);
  assert.match(refused.message, /needs approval \(policy rule ask-for-echo\), and no one can be asked/);
});

test('a bridge call asks the host of the call it was made for, naming the backend that makes it', async (t) => {
  const sb = await startGateway(t, {
    servers: {
      a: probe('a'),
      caller: { command: process.execPath, args: [BRIDGE_CALLER], bridge: { allow: ['a_echo'] } },
    },
    policy: {
      rules: [{ name: 'ask-bridge', callers: ['backend:caller'], tools: ['echo'], effect: 'approve' }],
    },
  });
  const asked: string[] = [];
  const { client } = await connectHttp(t, httpUrl(sb), {
    capabilities: { elicitation: { form: {} } },
    setup: (c) =>
      c.setRequestHandler('elicitation/create', async (req) => {
        asked.push(String((req.params as { message: string }).message));
        return { action: 'accept', content: { approve: true } };
      }),
  });
  const relayed = await client.callTool({
    name: 'caller_relay',
    arguments: { method: 'tools/call', params: { name: 'a_echo', arguments: { via: 'bridge' } } },
  });
  assert.match(textOf(relayed), /"via":"bridge"/);
  assert.equal(asked.length, 1);
  assert.match(asked[0]!, /backend:caller wants to call tool "echo" of server "a"/);
});

test('with pinning.onChange approve, a changed tool stays listed and each call asks until it is re-pinned', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: { s: { command: process.execPath, args: [SHIFTING] } },
    audit: { path },
    pinning: { enabled: true, onChange: 'approve' },
  });
  const asked: string[] = [];
  let changed: () => void = () => {};
  const { client } = await connectHttp(t, httpUrl(sb), {
    capabilities: { elicitation: { form: {} } },
    setup: (c) => {
      c.setRequestHandler('elicitation/create', async (req) => {
        asked.push(String((req.params as { message: string }).message));
        return { action: 'accept', content: { approve: true } };
      });
      c.setNotificationHandler('notifications/tools/list_changed', () => changed());
    },
  });
  await client.callTool({ name: 'greet', arguments: { who: 'a' } });
  assert.equal(asked.length, 0);
  const listChanged = new Promise<void>((resolve) => (changed = resolve));
  await client.callTool({ name: 'rewrite', arguments: { description: 'Says hello, differently.' } });
  await listChanged;
  const tools = (await client.listTools()).tools;
  assert.equal(tools.find((x) => x.name === 'greet')?.description, 'Says hello, differently.');
  assert.equal(textOf(await client.callTool({ name: 'greet', arguments: { who: 'b' } })), 'hello b');
  assert.equal(asked.length, 1);
  assert.match(asked[0]!, /definition changed since it was pinned \(switchboard pins diff s greet\)/);

  // Re-pinning leaves the listing as it is (the tool was listed all along): re-read the pins now.
  assert.equal(await runPins(['approve', 's', 'greet', '--db', path], captureIo().io), 0);
  sb.recheckPins();
  await client.callTool({ name: 'greet', arguments: { who: 'c' } });
  assert.equal(asked.length, 1, 'a re-pinned tool still asked for approval');
  const rows = auditRows(sb, path).filter((r) => r.target_name === 'greet');
  assert.deepEqual(
    rows.map((r) => [r.decision, r.rule]),
    [
      ['allow', 'defaults.host'],
      ['approve', 'pinning.onChange'],
      ['allow', 'defaults.host'],
    ],
  );
});
