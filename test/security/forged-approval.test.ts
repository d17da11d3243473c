// Attack: a backend running as switchboard's user writes the trust database to approve the call
// it is waiting on (a verdict row written with SQLite directly, no key). The verdict carries no
// MAC under the trust key, so the waiting call ignores it (logs it and puts the record back to
// pending), the operator can still decide, and the backend never sees the call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { probe } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { captureLog } from '../support/log-capture.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { captureIo, tempDbPath } from '../trust/helpers.js';
import { runApprovals } from '../../src/cli/approvals.js';
import { until } from '../support/poll.js';

function read<T>(path: string, sql: string, ...args: unknown[]): T | undefined {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(sql).get(...args) as T | undefined;
  } finally {
    db.close();
  }
}

test('an approval row forged into the database while a call waits does not release the call', async (t) => {
  const path = await tempDbPath(t);
  const log = captureLog('warn');
  const sb = await startGateway(
    t,
    {
      servers: { a: probe('a') },
      audit: { path },
      policy: {
        rules: [{ name: 'ask', backends: ['a'], tools: ['touch'], effect: 'approve' }],
        approval: { pollMs: 50, timeoutMs: 30_000 },
      },
    },
    { log: log.logger },
  );
  const { client } = await connectHttp(t, httpUrl(sb));
  let settled = false;
  const call = client.callTool({ name: 'touch', arguments: { n: 1 } }).then(
    () => 'went through',
    (e: Error) => e.message,
  );
  void call.then(() => (settled = true));
  const { id } = await until(() =>
    read<{ id: string }>(path, "SELECT id FROM approvals WHERE status = 'pending'"),
  );

  // The forgery: written with better-sqlite3 directly, as any process that can open the file could.
  const db = new Database(path);
  db.prepare(
    "UPDATE approvals SET status = 'approved', decided_at = ?, decided_by = 'operator:root' WHERE id = ?",
  ).run(Date.now(), id);
  db.close();

  // Switchboard saw it, refused it, and put the record back for the operator.
  await until(() => log.lines().find((l) => String(l.msg).includes('was ignored')), 'the forgery logged');
  const status = await until(() => {
    const s = read<{ status: string }>(path, 'SELECT status FROM approvals WHERE id = ?', id)?.status;
    return s === 'approved' ? undefined : s;
  });
  assert.equal(status, 'pending');
  assert.equal(settled, false, 'the call is still waiting');

  // The operator's verdict (with the key) is the one that counts.
  const io = captureIo();
  assert.equal(await runApprovals(['deny', id, '--db', path], io.io), 0, io.err.join('\n'));
  assert.match(await call, /declined by an operator/);
  const counter = await client.readResource({ uri: 'probe://a/counter' });
  assert.equal((counter.contents[0] as { text: string }).text, 'a counter 0');
});
