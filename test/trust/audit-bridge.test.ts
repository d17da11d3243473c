// Calls a backend makes over the real bridge socket are audited like a host's: allowed and refused alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { probe, textJson } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { queryAudit, verifyAudit } from '../../src/trust/audit-read.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { tempDbPath } from './helpers.js';

const CALLER = fileURLToPath(new URL('../fixtures/bridge-caller.js', import.meta.url));

test('a bridge call is recorded with the calling backend as caller, allowed or denied', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: {
      caller: { command: process.execPath, args: [CALLER], bridge: { allow: ['p_echo'] } },
      p: probe('p'),
    },
    audit: { path },
  });
  const { client } = await connectHttp(t, httpUrl(sb));
  const relay = async (name: string) =>
    textJson(
      await client.callTool({
        name: 'caller_relay',
        arguments: { method: 'tools/call', params: { name, arguments: { n: 1 } } },
      }),
    );
  assert.ok(!('error' in (await relay('p_echo'))));
  assert.ok('error' in (await relay('p_progress')));
  sb.flushAudit();

  const db = openTrustDb(path);
  t.after(() => db.close());
  const bridged = queryAudit(db, { caller: 'backend:caller' });
  assert.deepEqual(
    bridged.map((r) => [r.method, r.targetName, r.decision, r.rule, r.outcome]),
    [
      ['tools/call', 'echo', 'allow', 'servers.caller.bridge.allow', 'ok'],
      ['tools/call', 'progress', 'deny', 'defaults.backend', 'error'],
    ],
  );
  const hosted = queryAudit(db, { caller: 'host:http', target: 'caller/relay' });
  assert.equal(hosted.length, 2);
  assert.ok(hosted.every((r) => r.decision === 'allow' && r.outcome === 'ok'));
  assert.equal(verifyAudit(db).ok, true);
});
