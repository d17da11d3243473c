// Attack: a forged, replayed or altered approval. An approval lets through the one call it was
// asked for, once: approving it again, approving an id that was never asked, pre-approving a call
// by writing a record, or changing the arguments a record shows all fail, and the call with them.
// On the modern wire, an approval answer retried with other arguments or replayed is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { probe, rawStdio, textOf } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { captureIo, tempDbPath } from '../trust/helpers.js';
import { runApprovals } from '../../src/cli/approvals.js';
import { ApprovalStore, bindingOf, type ApprovalRecord } from '../../src/trust/approval-store.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { canonicalJson } from '../../src/encoding/canonical-json.js';
import { until } from '../support/poll.js';

async function start(t: Parameters<typeof startGateway>[0]) {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: { a: probe('a'), b: probe('b') },
    audit: { path },
    policy: {
      rules: [{ name: 'ask', backends: ['a'], tools: ['echo'], effect: 'approve' }],
      approval: { pollMs: 50, timeoutMs: 20_000 },
    },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  return { path, client };
}

function withStore<T>(path: string, use: (store: ApprovalStore, db: ReturnType<typeof openTrustDb>) => T): T {
  const db = openTrustDb(path);
  try {
    return use(new ApprovalStore(db), db);
  } finally {
    db.close();
  }
}

const pendingNot = (path: string, seen: string[]): Promise<ApprovalRecord> =>
  until(() => withStore(path, (s) => s.pending().find((p) => !seen.includes(p.id))));

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo();
  const code = await runApprovals(argv, io.io);
  return { code, out: io.out.join('\n'), err: io.err.join('\n') };
}

test('an approval is used once: approving it again is refused, and the same call asks anew', async (t) => {
  const { path, client } = await start(t);
  const first = client.callTool({ name: 'a_echo', arguments: { amount: 100 } });
  const one = await pendingNot(path, []);
  assert.equal((await cli('approve', one.id, '--db', path)).code, 0);
  assert.match(textOf(await first), /"amount":100/);
  const again = await cli('approve', one.id, '--db', path);
  assert.equal(again.code, 1);
  assert.match(again.err, /already used/);

  // The very same call again is a new question, not a replay of the old answer.
  const second = client.callTool({ name: 'a_echo', arguments: { amount: 100 } }).catch((e: Error) => e);
  const two = await pendingNot(path, [one.id]);
  assert.notEqual(two.id, one.id);
  assert.equal(two.binding, one.binding);
  // Marking the used record approved again (a replay written straight into the file) changes nothing.
  withStore(path, (_s, db) =>
    db.prepare("UPDATE approvals SET status = 'approved' WHERE id = ?").run(one.id),
  );
  assert.equal(
    withStore(path, (s) => s.get(two.id)!.status),
    'pending',
  );
  assert.equal((await cli('deny', two.id, '--db', path)).code, 0);
  assert.match(String(((await second) as Error).message), /declined by an operator/);
});

test('an id that was never asked for cannot be approved, and a record written in advance approves nothing', async (t) => {
  const { path, client } = await start(t);
  const forged = await cli('approve', '0123456789abcdef', '--db', path);
  assert.equal(forged.code, 1);
  assert.match(forged.err, /no such approval/);
  // A pre-approved record for exactly the call about to be made: the call still waits for its own.
  const args = { amount: 5 };
  const subject = {
    caller: 'host:http',
    method: 'tools/call',
    backend: 'a',
    target: 'echo',
    arguments: args,
  };
  withStore(path, (s, db) => {
    const r = s.create(subject, { exposed: 'a_echo', rule: 'ask', ttlMs: 60_000 });
    db.prepare("UPDATE approvals SET status = 'approved' WHERE id = ?").run(r.id);
  });
  const call = client.callTool({ name: 'a_echo', arguments: args }).catch((e: Error) => e);
  const own = await pendingNot(path, []);
  assert.equal(own.binding, bindingOf(subject));
  assert.equal((await cli('deny', own.id, '--db', path)).code, 0);
  assert.ok((await call) instanceof Error);
});

test('a record altered to show other arguments is refused by the CLI, and by the waiting call', async (t) => {
  const { path, client } = await start(t);
  const call = client.callTool({ name: 'a_echo', arguments: { to: 'mallory', amount: 1_000_000 } });
  const outcome = call.then(
    () => 'went through',
    (e: Error) => e.message,
  );
  const pending = await pendingNot(path, []);
  // The operator would be shown harmless arguments: the record no longer hashes to its binding.
  const harmless = { to: 'alice', amount: 1 };
  withStore(path, (_s, db) =>
    db.prepare('UPDATE approvals SET args = ? WHERE id = ?').run(canonicalJson(harmless), pending.id),
  );
  const tampered = await cli('approve', pending.id, '--db', path);
  assert.equal(tampered.code, 1);
  assert.match(tampered.err, /no longer matches the call it was made for/);
  // Rewritten with a binding to match the harmless arguments: switchboard's MAC over the record
  // still does not verify, so the CLI refuses it too, and the call keeps waiting for its own verdict.
  const rebound = bindingOf({
    caller: pending.caller,
    method: pending.method,
    backend: pending.backend,
    target: pending.target,
    arguments: harmless,
  });
  withStore(path, (_s, db) =>
    db.prepare('UPDATE approvals SET binding = ? WHERE id = ?').run(rebound, pending.id),
  );
  const rebinding = await cli('approve', pending.id, '--db', path);
  assert.equal(rebinding.code, 1);
  assert.match(rebinding.err, /no longer matches the call it was made for/);
  assert.equal(
    withStore(path, (s) => s.get(pending.id)!.status),
    'pending',
  );
  withStore(path, (_s, db) =>
    db.prepare("UPDATE approvals SET status = 'expired' WHERE id = ?").run(pending.id),
  );
  assert.match(await outcome, /approval [0-9a-f]{16} does not match this call or was already used/);
});

test('on the modern wire approval is an input_required question: changed arguments or a replayed answer are refused', async (t) => {
  const V = '2026-07-28';
  const { write, inbox } = await rawStdio(t, {
    servers: { a: probe('a'), b: probe('b') },
    policy: { rules: [{ name: 'ask', backends: ['a'], tools: ['touch'], effect: 'approve' }] },
  });
  const request = (id: number, params: Record<string, unknown>) =>
    write(
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': V,
            'io.modelcontextprotocol/clientInfo': { name: 'modern-host', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
          },
        },
      }),
    );
  const answer = async (id: number) => inbox.next((m) => m.id === id);
  const args = { name: 'a_touch', arguments: { n: 1 } };
  request(1, args);
  const first = (await answer(1)).result as {
    resultType: string;
    inputRequests: Record<
      string,
      { method: string; params: { message: string; _meta: Record<string, unknown> } }
    >;
    requestState: string;
  };
  assert.equal(first.resultType, 'input_required');
  const [key, ask] = Object.entries(first.inputRequests)[0]!;
  assert.equal(ask.method, 'elicitation/create');
  assert.match(ask.params.message, /wants to call tool "touch" of server "a" .* \{"n":1\}/);
  const yes = { [key]: { action: 'accept', content: { approve: true } } };
  // The approval answer sent with other arguments is refused, and the call still waits.
  request(2, { name: 'a_touch', arguments: { n: 2 }, requestState: first.requestState, inputResponses: yes });
  assert.equal(((await answer(2)).error as { code: number }).code, -32602);
  request(3, { ...args, requestState: first.requestState, inputResponses: yes });
  const done = (await answer(3)).result as { resultType: string; content: { text: string }[] };
  assert.equal(done.resultType, 'complete');
  assert.match(done.content[0]!.text, /"server":"a"/);
  // Replayed: the same approved state finds no call waiting; the tool ran once.
  request(4, { ...args, requestState: first.requestState, inputResponses: yes });
  assert.equal(((await answer(4)).error as { code: number }).code, -32602);
  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 5,
      method: 'resources/read',
      params: {
        uri: 'a+probe://a/counter',
        _meta: {
          'io.modelcontextprotocol/protocolVersion': V,
          'io.modelcontextprotocol/clientInfo': { name: 'modern-host', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  );
  const counter = (await answer(5)).result as { contents: { text: string }[] };
  assert.equal(counter.contents[0]!.text, 'a counter 1');
});
