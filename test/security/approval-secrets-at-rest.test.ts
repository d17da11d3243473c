// Attack: reading a vault secret out of a pending approval. The call's arguments carry a canary
// secret; while the call waits for an operator, neither the trust database's bytes (its WAL
// included), nor `switchboard approvals list`, nor the log hold it: the record keeps the arguments
// redacted, and only a hash binds the decision to the real ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probe } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { captureLog } from '../support/log-capture.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { makeVault } from '../vault/make-vault.js';
import { CLI, captureIo } from '../trust/helpers.js';
import { runApprovals } from '../../src/cli/approvals.js';
import { until } from '../support/poll.js';

const run = promisify(execFile);

test('a canary secret in the arguments of a waiting call is in neither the database file, approvals list nor the log', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-approval-canary-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  const vault = makeVault(dir, { canary });
  const path = join(dir, 'audit.sqlite');
  const log = captureLog('debug');
  const sb = await startGateway(
    t,
    {
      servers: { a: probe('a') },
      vault: { file: vault.file, keyFile: vault.keyFile },
      audit: { path },
      policy: {
        rules: [{ name: 'ask', backends: ['a'], tools: ['touch'], effect: 'approve' }],
        approval: { pollMs: 50, timeoutMs: 30_000 },
      },
    },
    { log: log.logger },
  );
  const { client } = await connectHttp(t, httpUrl(sb));
  const call = client
    .callTool({ name: 'touch', arguments: { token: canary, note: `use ${canary} once` } })
    .then(
      () => 'went through',
      (e: Error) => e.message,
    );
  const listed = await until(async () => {
    const { stdout } = await run(process.execPath, [CLI, 'approvals', 'list', '--db', path]);
    return stdout.includes('rule ask') ? stdout : undefined;
  });
  assert.ok(!listed.includes(canary), listed);
  assert.match(listed, /\[REDACTED:canary\]/);
  const json = await run(process.execPath, [CLI, 'approvals', 'list', '--json', '--db', path]);
  assert.ok(!json.stdout.includes(canary));

  for (const file of [path, `${path}-wal`]) {
    if (!existsSync(file)) continue;
    assert.equal(readFileSync(file).includes(canary), false, `${file} holds the canary`);
  }
  const id = (JSON.parse(json.stdout.split('\n')[0]!) as { id: string }).id;
  const io = captureIo();
  assert.equal(await runApprovals(['deny', id, '--db', path], io.io), 0, io.err.join('\n'));
  assert.match(await call, /declined by an operator/);
  await sb.stop();
  for (const file of [path, `${path}-wal`]) {
    if (!existsSync(file)) continue;
    assert.equal(readFileSync(file).includes(canary), false, `${file} holds the canary`);
  }
  assert.ok(!log.text().includes(canary), 'the log holds the canary');
});
