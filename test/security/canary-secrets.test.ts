// Threat: credential leakage. A backend holds a canary secret from the vault and tries to leak it
// on every path it has (result, tool error, JSON-RPC error, progress, log notification, stderr,
// instructions, a tool description); the host's wire, switchboard's log and the audit file's bytes
// must never hold it, nor a token the configured pattern names. Each backend gets only its own.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connectStdio } from '../support/mcp-clients.js';
import { makeVault } from '../vault/make-vault.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const CANARY_SERVER = fileURLToPath(new URL('../fixtures/canary-server.js', import.meta.url));
const TOKEN = 'sk-canarycanarycanary42';

/** Every form of the canary a careless redaction would let through. */
function forms(secret: string): string[] {
  return [secret, Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('base64url')];
}

function assertAbsent(haystack: string | Buffer, secret: string, where: string): void {
  for (const needle of [...forms(secret), TOKEN]) {
    assert.ok(!haystack.includes(needle), `${where} holds ${needle}`);
  }
}

interface Wire {
  lines: Record<string, unknown>[];
  request(method: string, params?: object): Promise<Record<string, unknown>>;
  notify(method: string, params?: object): void;
}

function rawHost(child: ReturnType<typeof spawn>): Wire {
  const lines: Record<string, unknown>[] = [];
  const waiting = new Map<number, (m: Record<string, unknown>) => void>();
  let buffer = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) !== -1) {
      const m = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>;
      buffer = buffer.slice(nl + 1);
      lines.push(m);
      if (typeof m.id === 'number' && !('method' in m)) waiting.get(m.id)?.(m);
    }
  });
  let next = 0;
  const write = (m: object) => child.stdin!.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
  return {
    lines,
    request: (method, params = {}) =>
      new Promise((resolve) => {
        const id = ++next;
        waiting.set(id, resolve);
        write({ id, method, params });
      }),
    notify: (method, params = {}) => write({ method, params }),
  };
}

test('a canary secret a backend echoes on every path reaches neither the host, the log nor the audit file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-canary-'));
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  const vault = makeVault(dir, { canary });
  const audit = join(dir, 'audit.sqlite');
  const config = join(dir, 'switchboard.json');
  writeFileSync(
    config,
    JSON.stringify({
      servers: {
        canary: { command: process.execPath, args: [CANARY_SERVER], secrets: { CANARY: 'canary' } },
      },
      vault: { file: vault.file, keyFile: vault.keyFile },
      redaction: { patterns: ['sk-[a-z0-9]{20}'] },
      audit: { path: audit, values: true },
      pinning: { enabled: true },
      bridge: { enabled: false },
      // The handshake below must carry the backend's instructions: it waits for the backend.
      startup: { waitMs: 600_000 },
    }),
  );
  const child = spawn(process.execPath, [MAIN, 'up', '--stdio', '--config', config, '--log-level', 'debug'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, XDG_STATE_HOME: dir },
  });
  t.after(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c: string) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const host = rawHost(child);

  const init = await host.request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'canary-host', version: '1.0.0' },
  });
  host.notify('notifications/initialized');
  await host.request('logging/setLevel', { level: 'debug' });
  const list = await host.request('tools/list');
  const reveal = await host.request('tools/call', { name: 'reveal', arguments: {} });
  const toolError = await host.request('tools/call', { name: 'tool_error', arguments: {} });
  const fail = await host.request('tools/call', { name: 'fail', arguments: {} });
  const chatty = await host.request('tools/call', {
    name: 'chatty',
    arguments: {},
    _meta: { progressToken: 'p-1' },
  });
  // The host itself sends the secret as an argument: the audit record (values on) must not keep it.
  await host.request('tools/call', { name: 'env', arguments: { note: `from the host: ${canary}` } });
  child.stdin.end();
  assert.equal(await exited, 0, stderr);

  // The host's wire: every path carried the canary, and every one arrives redacted.
  const wire = host.lines.map((l) => JSON.stringify(l)).join('\n');
  assertAbsent(wire, canary, "the host's wire");
  const r = (x: Record<string, unknown>) => JSON.stringify(x);
  assert.match(r(init), /Keep \[REDACTED:canary\] safe/);
  assert.match(r(list), /Returns the secret \[REDACTED:canary\]/);
  assert.match(r(reveal), /the secret is \[REDACTED:canary\]; the token is \[REDACTED:pattern-1\]/);
  assert.match(r(reveal), /"structuredContent":\{"secret":"\[REDACTED:canary\]"/);
  assert.match(r(toolError), /could not use \[REDACTED:canary\]/);
  assert.deepEqual(fail.error, {
    code: -32000,
    message: 'failed with [REDACTED:canary] and [REDACTED:pattern-1]',
    data: { secret: '[REDACTED:canary]' },
  });
  assert.match(r(chatty), /"done"/);
  const progress = host.lines.find((l) => l.method === 'notifications/progress');
  assert.match(r(progress!), /working with \[REDACTED:canary\]/);
  const logLine = host.lines.find((l) => l.method === 'notifications/message');
  assert.match(r(logLine!), /log \[REDACTED:canary\]/);

  // Switchboard's log, which records the backend's stderr.
  assertAbsent(stderr, canary, "switchboard's log");
  assert.match(stderr, /canary-server: starting with CANARY=\[REDACTED:canary\] and \[REDACTED:pattern-1\]/);
  assert.match(stderr, /canary-server: called chatty with \[REDACTED:canary\]/);

  // The audit database (and its write-ahead log), byte for byte: records and pinned definitions.
  const bytes = Buffer.concat(
    [audit, `${audit}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f)),
  );
  assertAbsent(bytes, canary, 'the audit database');
  assert.ok(bytes.includes('from the host: [REDACTED:canary]'), 'the audit record keeps the redacted value');
  assert.ok(bytes.includes('Returns the secret [REDACTED:canary]'), 'the pin holds the redacted definition');
});

test("each backend's environment holds only the secrets its own config declares", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-canary-'));
  const vault = makeVault(dir, {
    alpha: `alpha-${randomBytes(8).toString('hex')}`,
    beta: 'beta-secret-value',
  });
  const { sb, client } = await connectStdio(t, {
    servers: {
      a: {
        command: process.execPath,
        args: [CANARY_SERVER, '--var', 'A_TOKEN'],
        secrets: { A_TOKEN: 'alpha' },
      },
      b: {
        command: process.execPath,
        args: [CANARY_SERVER, '--var', 'B_TOKEN'],
        secrets: { B_TOKEN: 'beta' },
      },
      c: { command: process.execPath, args: [CANARY_SERVER], bridge: { allow: ['a_*'] } },
    },
    vault: { file: vault.file, keyFile: vault.keyFile },
    audit: { enabled: false },
  });
  const envOf = async (server: string) => {
    const result = await client.callTool({ name: `${server}_env`, arguments: {} });
    return JSON.parse((result.content as { text: string }[])[0]!.text) as string[];
  };
  const [a, b, c] = await Promise.all([envOf('a'), envOf('b'), envOf('c')]);
  assert.ok(a.includes('A_TOKEN') && !a.includes('B_TOKEN'), `a got ${a.join(' ')}`);
  assert.ok(b.includes('B_TOKEN') && !b.includes('A_TOKEN'), `b got ${b.join(' ')}`);
  assert.ok(!c.includes('A_TOKEN') && !c.includes('B_TOKEN'), `c got ${c.join(' ')}`);

  // What each got is its own secret: a shows it, redacted on the way out.
  const shown = await client.callTool({ name: 'a_reveal', arguments: {} });
  assert.match(JSON.stringify(shown.content), /the secret is \[REDACTED:alpha\]/);
  const none = await client.callTool({ name: 'c_reveal', arguments: {} });
  assert.match(JSON.stringify(none.content), /the secret is ; /);

  // A backend calling another over the bridge gets the same redacted answer a host does.
  const bridged = await sb.gateway.dispatch({ kind: 'backend', id: 'c' }, 'tools/call', {
    name: 'a_reveal',
    arguments: {},
  });
  assert.match(JSON.stringify(bridged.content), /the secret is \[REDACTED:alpha\]/);
});

/** A minimal Streamable HTTP backend (JSON answers) that records and echoes the Authorization it gets. */
async function headerEchoServer(): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      let text = '';
      for await (const chunk of req) text += String(chunk);
      const m = JSON.parse(text) as { id?: number; method: string; params?: Record<string, unknown> };
      const auth = req.headers.authorization ?? '';
      seen.push(auth);
      if (m.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const result =
        m.method === 'initialize'
          ? {
              protocolVersion: '2025-11-25',
              capabilities: { tools: {} },
              serverInfo: { name: 'h', version: '1' },
            }
          : m.method === 'tools/list'
            ? { tools: [{ name: 'whoami', inputSchema: { type: 'object' } }] }
            : m.method === 'tools/call'
              ? { content: [{ type: 'text', text: `you sent ${auth}` }] }
              : {};
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

test('an HTTP backend gets its secret in the header that names it, and cannot echo it to the host', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-canary-'));
  const token = `tok-${randomBytes(16).toString('hex')}`;
  const vault = makeVault(dir, { remote: token });
  const backend = await headerEchoServer();
  t.after(() => backend.close());
  const { client } = await connectStdio(t, {
    servers: { remote: { url: backend.url, headers: { Authorization: 'Bearer ${secret:remote}' } } },
    vault: { file: vault.file, keyFile: vault.keyFile },
    audit: { enabled: false },
  });
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  assert.deepEqual(result.content, [{ type: 'text', text: 'you sent Bearer [REDACTED:remote]' }]);
  assert.ok(backend.seen.length > 0);
  assert.ok(
    backend.seen.every((h) => h === `Bearer ${token}`),
    backend.seen.join(', '),
  );
});
