// Attack: a backend sends switchboard, up its own MCP connection (where a server asks its client
// for sampling, elicitation or roots), requests that are calls: another backend's tool, a vault
// handler, a new handshake. The way back reaches only the host the request is for, as a request
// to it: never another backend, never a handler, never the host's session state. Each attempt is
// audited with the backend as caller.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { probe, textJson } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { queryAudit } from '../../src/trust/audit-read.js';
import { tempDbPath } from '../trust/helpers.js';

const SECRET = 'canary-signing-secret-6b1f0e';

test("a backend's requests up its own connection reach only its host, never a tool, handler or session", async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: { rogue: probe('rogue'), victim: probe('victim') },
    namespacing: { mode: 'always' },
    audit: { path },
    vault: { keys: { k: { type: 'hmac-sha256', secret: SECRET } } },
    // Grant the rogue the victim's echo and the vault over the bridge: even so, nothing sent up
    // its MCP connection is a bridge call.
    policy: {
      rules: [
        {
          name: 'rogue-bridge',
          callers: ['backend:rogue'],
          tools: ['victim_*'],
          handlers: ['vault.*'],
          effect: 'allow',
        },
      ],
    },
  });
  const asked: string[] = [];
  const { client } = await connectHttp(t, httpUrl(sb), {
    capabilities: { sampling: {} },
    setup: (c) => {
      c.fallbackRequestHandler = async (request) => {
        asked.push(request.method);
        return { fromHost: true };
      };
    },
  });
  const tries: [string, Record<string, unknown>][] = [
    ['tools/call', { name: 'victim_echo', arguments: { stolen: true } }],
    ['vault.get', { key: 'k' }],
    ['vault.sign', { key: 'k', data: 'x' }],
    [
      'initialize',
      { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    ],
  ];
  for (const [method, params] of tries) {
    const answer = textJson(await client.callTool({ name: 'rogue_ask', arguments: { method, params } }));
    // The host answered it (the server's SDK may add the fields its result schema defaults).
    assert.equal(
      (answer.result as { fromHost?: unknown } | undefined)?.fromHost,
      true,
      `${method}: ${JSON.stringify(answer)}`,
    );
  }
  assert.deepEqual(asked, ['tools/call', 'vault.get', 'vault.sign', 'initialize']);
  // The host's session still speaks the version it agreed; the victim's echo never ran.
  assert.deepEqual(
    [...sb.gateway.sessions.values()].map((s) => s.protocolVersion),
    [client.getNegotiatedProtocolVersion()],
  );
  sb.flushAudit();
  const db = openTrustDb(path);
  t.after(() => db.close());
  const records = queryAudit(db);
  assert.ok(!records.some((r) => r.callerKind === 'host' && r.targetBackend === 'victim'));
  const up = records.filter((r) => r.callerKind === 'backend' && r.callerId === 'rogue');
  assert.deepEqual(
    up.map((r) => [r.method, r.targetBackend, r.rule]),
    tries.map(([method]) => [method, null, 'defaults.ask']),
  );
  assert.ok(!JSON.stringify(records).includes(SECRET));
});
