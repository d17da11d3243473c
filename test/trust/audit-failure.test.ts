// A failed audit write is logged and never fails the call it records.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Config } from '../../src/config/schema.js';
import { startSwitchboard } from '../../src/switchboard.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { connectHttp, httpUrl, probe } from '../gateway/harness.js';
import { tempDbPath } from './helpers.js';

test('a call succeeds and the failure is logged when its audit record cannot be written', async (t) => {
  const path = await tempDbPath(t);
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  const config = Config.parse({ servers: { p: probe('p') }, http: { port: 0 }, audit: { path } });
  const sb = await startSwitchboard({ config, http: true, log: pino({ level: 'warn' }, sink) });
  t.after(() => sb.stop());
  const { client } = await connectHttp(t, httpUrl(sb));

  // Another process breaks the file under the running switchboard.
  const other = openTrustDb(path);
  other.exec('DROP TABLE audit');
  other.close();

  const result = await client.callTool({ name: 'echo', arguments: { x: 1 } });
  assert.notEqual(result.isError, true);
  sb.flushAudit();
  const failure = lines.find((l) => l.msg === 'audit write failed; these calls have no audit record');
  assert.ok(failure, JSON.stringify(lines));
  assert.ok((failure.records as number) >= 1);
});
