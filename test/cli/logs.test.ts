// `switchboard up`'s log: JSON lines on stderr with nothing else in between, one debug line per
// call from the pipeline's diagnostics channel, npm's own chatter at debug, and a readable layout
// with --log-format pretty.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '../support/poll.js';
import { MAIN } from './run-cli.js';

const NPX_LIKE = fileURLToPath(new URL('../fixtures/npx-like-server.js', import.meta.url));

interface Up {
  child: ChildProcess;
  url: string;
  token: string;
  stderr: () => string;
  stop(): Promise<void>;
}

async function up(t: TestContext, flags: string[], env: NodeJS.ProcessEnv = {}): Promise<Up> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-logs-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'switchboard.json');
  await writeFile(
    file,
    JSON.stringify({
      sandbox: { mode: 'none' },
      servers: { clock: { command: process.execPath, args: [NPX_LIKE] } },
    }),
  );
  const child = spawn(
    process.execPath,
    [MAIN, 'up', '--config', file, '--port', '0', '--no-watch', ...flags],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        XDG_STATE_HOME: dir,
        SWITCHBOARD_LOG_LEVEL: '',
        SWITCHBOARD_LOG_FORMAT: '',
        ...env,
      },
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.after(() => void child.kill('SIGKILL'));
  let text = '';
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  // The summary comes before the endpoint line: wait for the latter (they may arrive apart).
  await eventually(
    'switchboard to be up',
    () => /fronting 1 of 1 servers/.test(text) && /Streamable HTTP: http:\/\/\S+?mcp/.test(text),
    30_000,
  );
  const url = /Streamable HTTP: (http:\/\/\S+?mcp)/.exec(text)![1]!;
  // The front's default: hosts send the local token, kept in the state directory.
  const token = readFileSync(join(dir, 'switchboard', 'http-token'), 'utf8').trim();
  return {
    child,
    url,
    token,
    stderr: () => text,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      assert.equal(stdout, '', 'nothing on stdout');
    },
  };
}

async function callNow({ url, token }: Up): Promise<void> {
  const client = new Client({ name: 'log-host', version: '1.0.0' }, { capabilities: {} });
  const headers = { authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  await client.callTool({ name: 'now', arguments: {} });
  await client.close();
}

const parsed = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        assert.fail(`a line on stderr is not JSON: ${line}`);
      }
    });

test('in JSON mode every stderr line is JSON, banner included; debug adds one line per call', async (t) => {
  const sb = await up(t, ['--log-format', 'json', '--log-level', 'debug']);
  await callNow(sb);
  await eventually('the call to be logged', () => /"msg":"call tools\/call/.test(sb.stderr()));
  await sb.stop();
  const lines = parsed(sb.stderr());
  const endpoint = lines.find((l) => String(l.msg).startsWith('Streamable HTTP: '));
  assert.equal(endpoint?.auth, 'local');
  assert.match(String(endpoint?.tokenFile), /switchboard\/http-token$/, 'the line names the token file');
  assert.ok(!sb.stderr().includes(sb.token), 'the token itself is never logged, debug included');
  assert.ok(
    lines.some((l) => /^Audit (on|off)/.test(String(l.msg))),
    'the audit summary is a record',
  );
  assert.ok(
    lines.some((l) => typeof l.claudeDesktop === 'object'),
    'the host snippet is a record',
  );
  const call = lines.find((l) => String(l.msg).startsWith('call tools/call'));
  assert.ok(call, 'a debug line for the call');
  assert.equal(call.level, 20);
  assert.equal(call.outcome, 'ok');
  assert.equal(call.target, 'clock/now');
  assert.match(String(call.caller), /^host:/);
  assert.equal(typeof call.callId, 'string');
  assert.equal(typeof call.durationMs, 'number');
  // npm's warnings are there, at debug; the server's own line at info.
  const npm = lines.filter((l) => /^npm (warn|notice)/.test(String(l.stderr)));
  assert.ok(npm.length >= 2, 'both npm lines, from each start of the server');
  assert.ok(npm.every((l) => l.level === 20));
  assert.equal(lines.find((l) => l.stderr === 'clock: starting')?.level, 30);
});

test('at info, no call lines and no npm chatter', async (t) => {
  const sb = await up(t, [], { SWITCHBOARD_LOG_FORMAT: 'json' });
  await callNow(sb);
  await sb.stop();
  const lines = parsed(sb.stderr());
  assert.ok(lines.some((l) => l.stderr === 'clock: starting'));
  assert.ok(!lines.some((l) => /^npm /.test(String(l.stderr))), 'npm lines stay at debug');
  assert.ok(!lines.some((l) => String(l.msg).startsWith('call ')), 'no call lines at info');
});

test('the flag wins over SWITCHBOARD_LOG_LEVEL; the start summary is said even at warn', async (t) => {
  const sb = await up(t, ['--log-level', 'warn', '--log-format', 'json'], { SWITCHBOARD_LOG_LEVEL: 'debug' });
  await sb.stop();
  const lines = parsed(sb.stderr());
  assert.ok(!lines.some((l) => Number(l.level) < 30), 'no debug lines');
  assert.ok(!lines.some((l) => l.msg === 'backend ready'), 'no other info lines');
  assert.ok(
    lines.some((l) => String(l.msg).startsWith('Streamable HTTP: ')),
    'the endpoint is said',
  );
});

test('--log-format pretty writes readable lines, not JSON', async (t) => {
  const sb = await up(t, ['--log-format', 'pretty']);
  await sb.stop();
  const text = sb.stderr();
  assert.match(text, /INFO.*switchboard \S+: fronting 1 of 1 servers \(clock\)/);
  assert.ok(!text.split('\n').some((l) => l.startsWith('{')), 'no JSON lines');
});
