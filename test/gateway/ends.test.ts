// How calls end when their host or switchboard goes away: a stop's deadline answers them with an
// error naming the shutdown; a stdio host closing stdin has its calls drained, or answered with
// that error, and the exit code says which; an HTTP host that disconnects has its call cancelled
// where its era says so (modern at once, legacy after http.sessions.detachedCallMs), with
// notifications/cancelled reaching the backend and the audit record saying cancelled.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import type { Switchboard } from '../../src/switchboard.js';
import { queryAudit } from '../../src/trust/audit-read.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { connect, faulty, json } from '../faults/helpers.js';
import { until } from '../support/poll.js';
import { spawnSwitchboard } from '../support/switchboard-process.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { tempDbPath } from '../trust/helpers.js';
import { Inbox, rawOpen, rawSession, readMessages } from './harness.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const SLOW = { name: 'slow', arguments: { steps: 1000, everyMs: 50 } };

/** The shutdown error a cut call must end with. */
function assertCutByShutdown(error: unknown): void {
  const e = error as { code?: number; message?: string; data?: { reason?: string } };
  assert.equal(e.code, -32052, JSON.stringify(error));
  assert.equal(e.data?.reason, 'draining');
  assert.match(e.message ?? '', /switchboard is shutting down/);
}

/** What the faulty backend was sent notifications/cancelled for, once it was sent any. */
function cancelledAtBackend(client: Client): Promise<unknown[]> {
  return until(async () => {
    const { cancelled } = json(await client.callTool({ name: 'state', arguments: {} }));
    return (cancelled as unknown[]).length > 0 ? (cancelled as unknown[]) : undefined;
  }, 'notifications/cancelled at the backend');
}

function auditOf(sb: Switchboard, path: string) {
  sb.flushAudit();
  const db = openTrustDb(path);
  try {
    return queryAudit(db);
  } finally {
    db.close();
  }
}

test('a call cut at the drain deadline gets an error naming the shutdown', async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty() }, shutdown: { drainMs: 100 } });
  const client = await connect(t, sb);
  const progress = new Inbox<number>();
  const cut = client.callTool(SLOW, { onprogress: (p) => progress.push(p.progress) });
  cut.catch(() => {});
  await progress.next();
  assert.deepEqual(await sb.stop(), { cut: ['tools/call f/slow'] });
  await assert.rejects(cut, (err) => (assertCutByShutdown(err), true));
});

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'modern-host', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
  progressToken: 'p',
};

test('a modern HTTP call cut at the drain deadline is answered with an error naming the shutdown', async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty() }, shutdown: { drainMs: 100 } });
  const stream = await rawOpen(
    httpUrl(sb),
    JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { ...SLOW, _meta: MODERN_META } }),
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'slow' },
  );
  await stream.inbox.next((m) => m.method === 'notifications/progress');
  assert.deepEqual(await sb.stop(), { cut: ['tools/call f/slow'] });
  // The stream still carries the call's answer: a cut is not the host's cancellation.
  const answer = await stream.inbox.next((m) => m.id === 8);
  assertCutByShutdown(answer.error);
});

/** `switchboard up --stdio` as a host runs it: NDJSON on its stdin and stdout. */
async function stdioProcess(t: TestContext, config: object) {
  const dir = await mkdtemp(join(tmpdir(), 'sb-stdio-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'switchboard.json');
  await writeFile(file, JSON.stringify(config));
  const child = spawn(process.execPath, [MAIN, 'up', '--stdio', '--no-watch', '--config', file], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.after(() => void child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const inbox = readMessages(child.stdout);
  const write = (m: object) => void child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
  // Its backends are up once it says so (a host would list first, and hear list_changed).
  await until(() => (/fronting 1 of 1 servers/.test(stderr) ? true : undefined), 'the backend to start');
  write({ id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } });
  await inbox.next((m) => m.id === 1);
  write({ method: 'notifications/initialized' });
  const progress = () => inbox.next((m) => m.method === 'notifications/progress');
  /** Starts a slow call and resolves once the backend is working on it. */
  const callSlow = async (id: number, steps: number) => {
    const args = { ...SLOW.arguments, steps };
    write({ id, method: 'tools/call', params: { ...SLOW, arguments: args, _meta: { progressToken: id } } });
    await progress();
  };
  const answer = (id: number) => inbox.next((m) => m.id === id);
  return { child, write, callSlow, answer, progress, exited, stderr: () => stderr };
}

test('stdin closed mid-call: the call finishes within the drain, queued ones are refused, exit 0', async (t) => {
  const host = await stdioProcess(t, {
    servers: { f: faulty() },
    limits: { maxCallsPerSession: 1, maxQueuedPerSession: 4 },
  });
  await host.callSlow(2, 3);
  host.write({ id: 3, method: 'tools/call', params: { name: 'echo', arguments: {} } });
  host.child.stdin.end();
  assert.equal(json((await host.answer(2)).result).steps, 3, 'the call under way was answered');
  assertCutByShutdown((await host.answer(3)).error);
  assert.equal(await host.exited, 0);
});

test('stdin closed mid-call: what outlasts shutdown.drainMs is answered with an error, exit 1', async (t) => {
  const host = await stdioProcess(t, { servers: { f: faulty() }, shutdown: { drainMs: 200 } });
  await host.callSlow(2, 1000);
  host.child.stdin.end();
  assertCutByShutdown((await host.answer(2)).error);
  assert.equal(await host.exited, 1);
  assert.match(host.stderr(), /cut short: tools\/call f\/slow/);
});

test('SIGTERM mid-call over stdio: the cut call gets an error naming the shutdown', async (t) => {
  const host = await stdioProcess(t, { servers: { f: faulty() }, shutdown: { drainMs: 200 } });
  await host.callSlow(2, 1000);
  host.child.kill('SIGTERM');
  assertCutByShutdown((await host.answer(2)).error);
  assert.equal(await host.exited, 1);
});

test('SIGTERM mid-call over stdio, a modern request: the cut call gets an error naming the shutdown', async (t) => {
  const host = await stdioProcess(t, { servers: { f: faulty() }, shutdown: { drainMs: 200 } });
  host.write({ id: 3, method: 'tools/call', params: { ...SLOW, _meta: MODERN_META } });
  await host.progress();
  host.child.kill('SIGTERM');
  assertCutByShutdown((await host.answer(3)).error);
  assert.equal(await host.exited, 1);
});

test('SIGTERM mid-call over HTTP: the cut call gets an error naming the shutdown', async (t) => {
  const sb = await spawnSwitchboard(t, { servers: { f: faulty() }, shutdown: { drainMs: 200 } });
  const { Client: SdkClient, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  const client = new SdkClient({ name: 'sigterm-host', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(sb.url)));
  const progress = new Inbox<number>();
  const call = client.callTool(SLOW, { onprogress: (p) => progress.push(p.progress) });
  call.catch(() => {});
  await progress.next();
  process.kill(sb.pid, 'SIGTERM');
  await assert.rejects(call, (err) => (assertCutByShutdown(err), true));
});

test('a modern HTTP host closing its stream cancels the call at the backend, audited as cancelled', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, { servers: { f: faulty() }, audit: { path } });
  const observer = await connect(t, sb);
  const ac = new AbortController();
  const stream = await rawOpen(
    httpUrl(sb),
    JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { ...SLOW, _meta: MODERN_META } }),
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'slow' },
    ac.signal,
  );
  stream.ended.catch(() => {});
  await stream.inbox.next((m) => m.method === 'notifications/progress');
  ac.abort();
  assert.equal((await cancelledAtBackend(observer)).length, 1);
  const record = await until(
    () => auditOf(sb, path).find((r) => r.targetName === 'slow' && r.outcome === 'error'),
    'the cancelled call to be audited',
  );
  assert.equal(record.errorCode, 'cancelled');
});

test('a legacy HTTP host that disconnects has its call cancelled after detachedCallMs, audited', async (t) => {
  const path = await tempDbPath(t);
  const sb = await startGateway(t, {
    servers: { f: faulty() },
    audit: { path },
    http: { sessions: { detachedCallMs: 0 } },
  });
  const observer = await connect(t, sb);
  const session = await rawSession(httpUrl(sb));
  const ac = new AbortController();
  const stream = await rawOpen(
    httpUrl(sb),
    JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { ...SLOW, _meta: { progressToken: 'p' } },
    }),
    { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
    ac.signal,
  );
  stream.ended.catch(() => {});
  await stream.inbox.next((m) => m.method === 'notifications/progress');
  ac.abort();
  assert.equal((await cancelledAtBackend(observer)).length, 1);
  const record = await until(
    () => auditOf(sb, path).find((r) => r.targetName === 'slow' && r.outcome === 'error'),
    'the cancelled call to be audited',
  );
  assert.equal(record.errorCode, 'cancelled');
});
