// A failed audit write is logged and never fails the call it records (that call has been answered
// already). With audit.onFailure: allow the calls after it go on too; failing closed, they are
// refused (test/security/audit-write-failure.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { probe } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { captureLog } from '../support/log-capture.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { tempDbPath } from './helpers.js';

test('a call succeeds and the failure is logged when its audit record cannot be written', async (t) => {
  const path = await tempDbPath(t);
  const log = captureLog('warn');
  const sb = await startGateway(
    t,
    { servers: { p: probe('p') }, audit: { path, onFailure: 'allow' } },
    { log: log.logger },
  );
  const { client } = await connectHttp(t, httpUrl(sb));

  // Another process breaks the file under the running switchboard.
  const other = openTrustDb(path);
  other.exec('DROP TABLE audit');
  other.close();

  const result = await client.callTool({ name: 'echo', arguments: { x: 1 } });
  assert.notEqual(result.isError, true);
  sb.flushAudit();
  const failure = log.lines().find((l) => l.msg === 'audit write failed; these calls have no audit record');
  assert.ok(failure, log.text());
  assert.ok((failure.records as number) >= 1);
});
