// Policy over the meta-tools, attacked from a host: a caller denied run_script and call_tool (as
// tools of the server `switchboard`) does not see them listed, cannot call them directly, cannot
// reach run_script through call_tool, and gets exactly the error of a tool that does not exist;
// each refusal is audited under the rule that made it. The profile keeps search, and a caller the
// rule does not name keeps every meta-tool.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { ConfigInput } from '../../src/config/schema.js';
import { sha256Hex } from '../../src/front/http-auth.js';
import { queryAudit } from '../../src/trust/audit-read.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { until } from '../support/poll.js';

const RECORDS = fileURLToPath(new URL('../fixtures/records-server.js', import.meta.url));
const KEYS = { support: 'support-key-0123456789abcdef', dev: 'dev-key-0123456789abcdef' };

async function host(t: TestContext, url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'meta-policy-attacker', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { authProvider: { token: async () => key } }),
  );
  t.after(() => client.close());
  return client;
}

const outcome = async (p: Promise<unknown>): Promise<string> => {
  try {
    const r = (await p) as { isError?: boolean; content?: { text?: string }[] };
    return r.isError ? `isError: ${r.content?.[0]?.text}` : 'succeeded';
  } catch (err) {
    return `${(err as { code?: number }).code}: ${(err as Error).message}`;
  }
};

test('a host denied run_script and call_tool cannot reach them by any name', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-meta-policy-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const config: ConfigInput = {
    servers: { records: { command: process.execPath, args: [RECORDS] } },
    namespacing: { mode: 'always' },
    audit: { path: join(dir, 'audit.sqlite') },
    policy: {
      rules: [
        {
          name: 'support-no-scripts',
          callers: ['host:key:support'],
          backends: ['switchboard'],
          tools: ['run_script', 'call_tool'],
          effect: 'deny',
        },
      ],
    },
    catalog: {
      mode: 'search',
      codeMode: { enabled: true },
      profiles: { support: { mode: 'search', credentials: { keys: ['support'] } } },
    },
    http: { auth: { keys: Object.entries(KEYS).map(([name, key]) => ({ name, sha256: sha256Hex(key) })) } },
  };
  const sb = await startGateway(t, config);
  const support = await host(t, `${httpUrl(sb)}/support`, KEYS.support);
  const dev = await host(t, httpUrl(sb), KEYS.dev);
  await until(
    async () =>
      (
        (await dev.callTool({ name: 'search_tools', arguments: { query: 'record' } })) as {
          structuredContent: { tools: unknown[] };
        }
      ).structuredContent.tools.length > 0 || undefined,
    'the records backend',
  );

  await t.test('the denied meta-tools are not listed; search stays', async () => {
    const names = (await support.listTools()).tools.map((x) => x.name).sort();
    assert.deepEqual(names, ['describe_tools', 'search_tools']);
    const found = (await support.callTool({ name: 'search_tools', arguments: { query: 'get record' } })) as {
      structuredContent: { tools: { name: string }[] };
    };
    assert.ok(found.structuredContent.tools.some((x) => x.name === 'records_get_record'));
  });

  await t.test('calling them directly, or run_script through call_tool, is an unknown tool', async () => {
    const absent = await outcome(support.callTool({ name: 'no_such_tool', arguments: {} }));
    assert.equal(absent, '-32602: Unknown tool: no_such_tool');
    assert.equal(
      await outcome(support.callTool({ name: 'run_script', arguments: { script: 'return 1' } })),
      '-32602: Unknown tool: run_script',
    );
    assert.equal(
      await outcome(
        support.callTool({
          name: 'call_tool',
          arguments: { name: 'records_get_record', arguments: { id: 1 } },
        }),
      ),
      '-32602: Unknown tool: call_tool',
    );
    // The host that may use call_tool still cannot reach run_script through it.
    assert.equal(
      await outcome(
        dev.callTool({
          name: 'call_tool',
          arguments: { name: 'run_script', arguments: { script: 'return 1' } },
        }),
      ),
      '-32602: Unknown tool: run_script',
    );
  });

  await t.test('a caller the rule does not name keeps every meta-tool', async () => {
    const names = (await dev.listTools()).tools.map((x) => x.name).sort();
    assert.deepEqual(names, ['call_tool', 'describe_tools', 'run_script', 'search_tools']);
    const r = (await dev.callTool({ name: 'run_script', arguments: { script: 'return 6 * 7' } })) as {
      structuredContent: { result: unknown };
    };
    assert.equal(r.structuredContent.result, 42);
    assert.equal(
      await outcome(
        dev.callTool({ name: 'call_tool', arguments: { name: 'records_get_record', arguments: { id: 1 } } }),
      ),
      'succeeded',
    );
  });

  await t.test('each refusal and each allowed meta-tool call is audited with its rule', async () => {
    sb.flushAudit();
    const db = openTrustDb(join(dir, 'audit.sqlite'));
    t.after(() => db.close());
    const calls = queryAudit(db, { method: 'tools/call' });
    const refused = calls.filter((x) => x.callerId === 'key:support');
    const byName = (n: string) => calls.filter((x) => x.calledName === n);
    const denied = byName('run_script').filter((x) => x.decision === 'deny');
    assert.ok(
      denied.some((x) => x.rule === 'support-no-scripts'),
      JSON.stringify(refused),
    );
    assert.ok(byName('call_tool').some((x) => x.decision === 'deny' && x.rule === 'support-no-scripts'));
    assert.ok(byName('run_script').some((x) => x.decision === 'allow' && x.rule === 'defaults.meta'));
    assert.ok(byName('search_tools').every((x) => x.decision === 'allow' && x.rule === 'defaults.meta'));
  });
});
