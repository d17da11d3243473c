// Threat: a secret carried past redaction inside a large string. Large strings of arguments and
// results cross switchboard as bytes, never decoded (docs/benchmarks.md); a backend that answers
// a vault secret inside one, written as JSON writes it or spelt with the escapes JSON allows
// (`\u0073…`, `\/`), over either front, from a stdio backend or an HTTP one (a JSON body or an SSE
// event, whose large strings reach switchboard as bytes too), must not get it to the host, and a
// host that sends one in a large argument must not get it into the audit trail.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { serveBulkEcho, type Framing } from '../fixtures/bulk-echo-http.js';
import { connectHttp, connectStdio } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { makeVault } from '../vault/make-vault.js';

const BULK_ECHO = fileURLToPath(new URL('../fixtures/bulk-echo-server.js', import.meta.url));
/**
 * A canary with characters JSON escapes (quote, backslash, newline) and a slash. No piece searched
 * for is hex alone: the audit trail is full of hashes, which would hold one by chance.
 */
const CANARY = 'canary/"q7zk"\\e2\nd9-4b8a';

/** `bulk` over stdio, or at an HTTP backend's URL. */
function setup(url?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bytes-secrets-'));
  const vault = makeVault(dir, { canary: CANARY });
  const audit = join(dir, 'audit.db');
  return {
    audit,
    config: {
      servers: {
        bulk: url ? { url, era: 'legacy' as const } : { command: process.execPath, args: [BULK_ECHO] },
      },
      vault: { file: vault.file, keyFile: vault.keyFile },
      audit: { path: audit, values: true },
    },
  };
}

/** Text of about `bytes` bytes with the canary at its start, at its end and at many places between. */
function carrying(bytes: number): string {
  const parts: string[] = [CANARY];
  for (let i = 0; parts.join('').length < bytes; i++) parts.push('x'.repeat(997 + (i % 13)), CANARY);
  return parts.join('');
}

function assertHidden(what: string, wire: string): void {
  for (const form of [CANARY, JSON.stringify(CANARY).slice(1, -1), 'canary/', 'q7zk', 'e2\\nd9', 'd9-4b8a'])
    assert.ok(!wire.includes(form), `${what} holds ${JSON.stringify(form)}`);
}

async function answers(t: TestContext, front: 'stdio' | 'http', backendUrl?: string) {
  const { config, audit } = setup(backendUrl);
  const client =
    front === 'stdio'
      ? (await connectStdio(t, config)).client
      : (await connectHttp(t, httpUrl(await startGateway(t, config)))).client;
  const results: string[] = [];
  for (const spell of [undefined, 'unicode', 'slash'])
    for (const bytes of [70_000, 600_000]) {
      const text = carrying(bytes);
      const result = await client.callTool(
        { name: 'echo', arguments: { text, ...(spell && { spell }) } },
        { timeout: 120_000 },
      );
      const wire = JSON.stringify(result);
      assertHidden(`the ${front} host's answer (${spell ?? 'as JSON writes it'}, ${bytes} bytes)`, wire);
      assert.ok(wire.includes('[REDACTED:canary]'), 'the canary was replaced');
      results.push(wire);
    }
  return { results, audit };
}

/** The audit database's bytes, its write-ahead log included. */
function auditBytes(path: string): string {
  return [path, `${path}-wal`]
    .filter((p) => existsSync(p))
    .map((p) => readFileSync(p).toString('latin1'))
    .join('');
}

test('a secret in a large result does not reach a host on the stdio front, however it is spelt', async (t) => {
  const { audit } = await answers(t, 'stdio');
  assertHidden('the audit trail', auditBytes(audit));
});

test('a secret in a large result does not reach a host on the HTTP front, however it is spelt', async (t) => {
  const { audit } = await answers(t, 'http');
  assertHidden('the audit trail', auditBytes(audit));
});

for (const framing of ['json', 'sse-crlf'] satisfies Framing[]) {
  test(`a secret in a large result from an HTTP backend (${framing}) does not reach a host, however it is spelt`, async (t) => {
    const backend = await serveBulkEcho(framing);
    t.after(() => backend.close());
    const { audit } = await answers(t, 'stdio', backend.url);
    assertHidden('the audit trail', auditBytes(audit));
  });
}
