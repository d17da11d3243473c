// Shared by the leak tests: switchboard run as a real child (`up --stdio`) with a raw host on its
// stdin/stdout that records every line it gets and answers what switchboard asks it, and the
// checks that a needle appears nowhere bytes went (the host's wire, switchboard's log, the
// audit/pins database file and its write-ahead log); and a remote backend that says one thing.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
export const CANARY_SERVER = fileURLToPath(new URL('../fixtures/canary-server.js', import.meta.url));

export type Json = Record<string, unknown>;

export interface CanaryRun {
  /** Every line the host received, parsed. */
  readonly lines: Json[];
  request(method: string, params?: object): Promise<Json>;
  notify(method: string, params?: object): void;
  /** Ends the host's input and waits for switchboard to exit; returns its whole log. */
  finish(): Promise<string>;
  /** The raw bytes of the database file (and its write-ahead log): audit records and pins. */
  dbBytes(): Buffer;
}

/**
 * Starts switchboard on `config` (written to `dir`), with its audit/pins database at `db`. The
 * host answers every request switchboard sends it with `{}`-like results of the right shape.
 */
export function runSwitchboard(
  t: TestContext,
  dir: string,
  config: Json,
  db: string,
  env: NodeJS.ProcessEnv = {},
): CanaryRun {
  const file = join(dir, 'switchboard.json');
  writeFileSync(file, JSON.stringify(config));
  const child = spawn(process.execPath, [MAIN, 'up', '--stdio', '--config', file, '--log-level', 'debug'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...env, XDG_STATE_HOME: dir },
  });
  t.after(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c: string) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const lines: Json[] = [];
  const waiting = new Map<number, (m: Json) => void>();
  const write = (m: object) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
  let buffer = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
      const m = JSON.parse(buffer.slice(0, nl)) as Json;
      buffer = buffer.slice(nl + 1);
      lines.push(m);
      if ('method' in m && m.id !== undefined) write({ id: m.id, result: answerTo(String(m.method)) });
      else if (typeof m.id === 'number') waiting.get(m.id)?.(m);
    }
  });
  let next = 0;
  return {
    lines,
    request: (method, params = {}) =>
      new Promise((resolve) => {
        const id = ++next;
        waiting.set(id, resolve);
        write({ id, method, params });
      }),
    notify: (method, params = {}) => write({ method, params }),
    async finish() {
      child.stdin.end();
      assert.equal(await exited, 0, stderr);
      return stderr;
    },
    dbBytes: () => Buffer.concat([db, `${db}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f))),
  };
}

function answerTo(method: string): Json {
  switch (method) {
    case 'sampling/createMessage':
      return { role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'host-model' };
    case 'elicitation/create':
      return { action: 'decline' };
    case 'roots/list':
      return { roots: [] };
    default:
      return {};
  }
}

/** A legacy handshake declaring sampling and elicitation, then the debug log level. */
export async function handshake(run: CanaryRun): Promise<Json> {
  const init = await run.request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: { sampling: {}, elicitation: { form: {} } },
    clientInfo: { name: 'canary-host', version: '1.0.0' },
  });
  run.notify('notifications/initialized');
  await run.request('logging/setLevel', { level: 'debug' });
  return init;
}

/** A stateless 2026-07-28 request on the same stream. */
export function modernRequest(run: CanaryRun, method: string, params: Json = {}): Promise<Json> {
  return run.request(method, {
    ...params,
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'canary-host', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  });
}

/** Fails naming where and which needle, when any needle occurs in the haystack. */
export function assertNone(haystack: string | Buffer, needles: readonly string[], where: string): void {
  for (const needle of needles) assert.ok(!haystack.includes(needle), `${where} holds ${needle}`);
}

/** A minimal Streamable HTTP backend (JSON answers) whose one tool, `whoami`, answers with `said`. */
export async function jsonRemote(t: TestContext, said: string): Promise<string> {
  const server = createServer((req, res) => {
    void (async () => {
      let body = '';
      for await (const chunk of req) body += String(chunk);
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const m = JSON.parse(body) as { id?: number; method: string };
      if (m.id === undefined) return void res.writeHead(202).end();
      const info = { name: 'remote', version: '1.0.0' };
      const result =
        m.method === 'initialize'
          ? { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: info }
          : m.method === 'tools/list'
            ? { tools: [{ name: 'whoami', inputSchema: { type: 'object' } }] }
            : m.method === 'tools/call'
              ? { content: [{ type: 'text', text: said }] }
              : {};
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}
