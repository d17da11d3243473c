// Backends that fail explain themselves: the last lines of their stderr (bounded, redacted) on the
// gateway's per-backend state, in the failure's log line and in `switchboard validate`; a missing
// command names the PATH it was looked for on; an unanswered handshake names its timeout and
// setting; a refused private address names the address and the setting that allows it; a port in
// use is one clear error, found before any backend is spawned; a profile that cannot be
// served is refused before anything starts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { lookup } from 'node:dns/promises';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { captureLog } from '../support/log-capture.js';
import { startGateway } from '../support/start-switchboard.js';
import { MAIN, runCli } from './run-cli.js';
import { until } from '../support/poll.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}.js`, import.meta.url));
const CRASHING = { command: process.execPath, args: [fixture('crashing-server')] };
const SILENT = { command: process.execPath, args: [fixture('silent-server')], era: 'legacy' as const };
const REDACTION = { patterns: ['sk-live-[0-9a-f]+'] };

test('a backend that fails to start keeps its last stderr lines, redacted, for status and the log', async (t) => {
  const log = captureLog('info');
  const sb = await startGateway(
    t,
    { sandbox: { mode: 'none' }, redaction: REDACTION, servers: { crashing: CRASHING } },
    { log: log.logger },
  );
  const backend = sb.gateway.backends.get('crashing')!;
  const tail = backend.lastStderr;
  assert.equal(tail.length, 20, 'at most 20 lines');
  assert.equal(tail.at(-1), 'fatal: cannot continue without a valid API_TOKEN');
  assert.equal(tail.at(-2), 'Error: the API rejected token [REDACTED:pattern-1]');
  assert.ok(!tail.join('\n').includes('sk-live'), 'the token is not kept');
  assert.deepEqual(sb.failedBackends[0]?.stderr, tail);
  assert.deepEqual(backend.status()[0]?.lastStderr, tail);
  const failure = log
    .lines()
    .find((l) => l.msg === 'backend failed to start; serving without it until a retry succeeds');
  assert.ok(failure, 'the failure is logged');
  assert.deepEqual(failure.stderr, tail);
});

test('switchboard validate shows why each backend did not start', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-fail-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'switchboard.json');
  await writeFile(join(dir, 'server.sh'), '#!/nonexistent/interpreter\n', { mode: 0o755 });
  await writeFile(
    file,
    JSON.stringify({
      sandbox: { mode: 'none' },
      redaction: REDACTION,
      limits: { startupTimeoutMs: 1000 },
      servers: {
        crashing: CRASHING,
        missing: { command: 'no-such-mcp-server-cmd', env: { PATH: '/nonexistent/bin' } },
        // A path is not looked up on PATH: no word of it.
        absent: { command: join(dir, 'no-such-server') },
        // There, but its #! interpreter is not.
        shebang: { command: join(dir, 'server.sh') },
        // The command is there; its working directory is not (spawn says ENOENT all the same).
        nowhere: { command: process.execPath, cwd: join(dir, 'no-such-dir') },
        silent: SILENT,
      },
    }),
  );
  const run = await runCli(['validate', '--config', file], { env: { ...process.env, XDG_STATE_HOME: dir } });
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /servers\.crashing: the server did not start: .*exited with code 3/);
  assert.match(
    run.stderr,
    /its stderr ended with:\n(\s+.*\n)*\s+fatal: cannot continue without a valid API_TOKEN/,
  );
  assert.match(run.stderr, /rejected token \[REDACTED:pattern-1\]/);
  assert.doesNotMatch(run.stderr, /sk-live/);
  assert.match(
    run.stderr,
    /servers\.missing: .*command "no-such-mcp-server-cmd" not found \(spawn no-such-mcp-server-cmd ENOENT\) on the PATH the backend sees: \/nonexistent\/bin\. Hosts such as Claude Desktop start servers without your shell's PATH: give the command as an absolute path, or set env: \{ PATH: … \}/,
  );
  assert.match(
    run.stderr,
    /servers\.absent: .*command ".*no-such-server" not found \(spawn .* ENOENT\): no such file/,
  );
  assert.doesNotMatch(run.stderr, /servers\.absent: [^\n]*PATH/);
  assert.match(
    run.stderr,
    /servers\.shebang: .*server\.sh" not found .*: the file is there: the interpreter its #! line names is not/,
  );
  assert.match(
    run.stderr,
    /servers\.nowhere: .*cwd ".*no-such-dir" does not exist \(spawn .* ENOENT\): set cwd to a directory, or leave it out/,
  );
  assert.match(
    run.stderr,
    /servers\.silent: .*did not answer initialize within 1000 ms \(limits\.startupTimeoutMs\)/,
  );
  assert.doesNotMatch(run.stderr, /Request cancelled/);
});

test('an HTTP backend whose name resolves to a private address says which and what allows it', async (t) => {
  // This machine's own name resolves to one of its addresses: a private or loopback one here.
  const name = hostname();
  const { address } = await lookup(name).catch(() => ({ address: '' }));
  if (!/^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.)/.test(address)) {
    t.skip(`${name} does not resolve to a private address here`);
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'sb-fail-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'switchboard.json');
  await writeFile(file, JSON.stringify({ servers: { inside: { url: `http://${name}:9/mcp` } } }));
  const run = await runCli(['validate', '--config', file], { env: { ...process.env, XDG_STATE_HOME: dir } });
  assert.equal(run.code, 1);
  assert.match(
    run.stderr,
    new RegExp(
      `refused to connect backend "inside" to ${name} \\(it resolves to ${address.replaceAll('.', '\\.')}\\)`,
    ),
  );
  assert.match(run.stderr, /servers\.inside\.allowPrivateNetwork: true/);
});

test('a port in use stops the start with one clear error, before any backend is spawned', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-fail-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const port = await takenPort(t);
  const file = join(dir, 'switchboard.json');
  // The port is found taken before any backend is spawned: this one would write its file.
  const started = join(dir, 'started');
  const spawned = { command: process.execPath, args: [fixture('faulty-server'), '--state', started] };
  await writeFile(
    file,
    JSON.stringify({ sandbox: { mode: 'none' }, admin: { enabled: false }, servers: { spawned } }),
  );
  const run = await runCli(['up', '--config', file, '--port', String(port), '--log-format', 'json'], {
    env: { ...process.env, XDG_STATE_HOME: dir },
  });
  assert.notEqual(run.code, 0);
  assert.match(
    run.stderr,
    new RegExp(`port ${port} on 127\\.0\\.0\\.1 is in use; choose another with --port`),
  );
  assert.doesNotMatch(run.stderr, /backend failed to start/);
  assert.ok(!existsSync(started), 'no backend was spawned');
});

test('an admin port in use leaves switchboard serving without it, naming the flag; --admin-port moves it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-fail-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const port = await takenPort(t);
  const file = join(dir, 'switchboard.json');
  await writeFile(file, JSON.stringify({ sandbox: { mode: 'none' }, admin: { port }, servers: {} }));
  const env = { ...process.env, XDG_STATE_HOME: dir };
  const busy = await runUntil(
    ['up', '--config', file, '--port', '0', '--log-format', 'json'],
    env,
    /fronting/,
  );
  assert.match(
    busy,
    new RegExp(`admin listener: 127\\.0\\.0\\.1:${port} is in use \\(set admin\\.port or --admin-port`),
  );
  const moved = await runUntil(
    ['up', '--config', file, '--port', '0', '--admin-port', '0', '--log-format', 'json'],
    env,
    /fronting/,
    // The flag holds at a reload too: the file's port is no change waiting for a restart.
    () =>
      writeFile(
        file,
        JSON.stringify({ sandbox: { mode: 'none' }, admin: { port }, servers: {}, log: { level: 'info' } }),
      ),
    /configuration reloaded/,
  );
  const at = /admin: http:\/\/127\.0\.0\.1:(\d+)\//.exec(moved)?.[1];
  assert.ok(at !== undefined && Number(at) !== port, moved);
  assert.doesNotMatch(moved, /admin\.port changed but needs a restart/);
  const usage = await runCli(['up', '--admin-port', 'x'], { env });
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--admin-port expects a number from 0 to 65535, got "x"/);
  // One port for both listeners is refused before anything starts, from a file or from flags.
  const same = await runCli(['up', '--port', String(port), '--admin-port', String(port)], { env });
  assert.equal(same.code, 2);
  assert.match(same.stderr, /--admin-port is --port too \(\d+\): the admin listener needs a port of its own/);
  const inFile = await runCli(['validate', '--offline', '--config', file], { env });
  assert.equal(inFile.code, 0, 'the file alone has no clash');
  await writeFile(file, JSON.stringify({ http: { port: 47999 }, admin: { port: 47999 }, servers: {} }));
  const clash = await runCli(['validate', '--offline', '--config', file], { env });
  assert.equal(clash.code, 1);
  assert.match(clash.stderr, /admin\.port: is http\.port too \(47999\)/);
});

test('a start refused for a setting, with no config file, says where settings go', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-fail-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const env = { ...process.env, XDG_STATE_HOME: dir, HOME: dir };
  const open = await runCli(['up', '--host', '0.0.0.0', '--port', '0', '--log-format', 'json'], { env });
  assert.notEqual(open.code, 0);
  assert.match(open.stderr, /http\.auth: host 0\.0\.0\.0 is not a loopback address/);
  assert.match(
    open.stderr,
    /no --config given: the settings named are those of a config file; `switchboard init`/,
  );
  // A port in use names the flag that fixes it: no word of a file.
  const port = await takenPort(t);
  const busy = await runCli(['up', '--port', String(port), '--log-format', 'json'], { env });
  assert.notEqual(busy.code, 0);
  assert.match(busy.stderr, /is in use; choose another with --port/);
  assert.doesNotMatch(busy.stderr, /no --config given/);
});

test('a profile is refused before anything starts: without --stdio, or one the config lacks', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-fail-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const env = { ...process.env, XDG_STATE_HOME: dir, HOME: dir };
  const http = await runCli(['up', '--port', '0', '--profile', 'code'], { env });
  assert.equal(http.code, 2);
  assert.match(http.stderr, /--profile applies to --stdio; an HTTP host chooses its profile by path/);
  const missing = await runCli(['up', '--stdio', '--profile', 'nope', '--log-format', 'json'], { env });
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /no catalog profile named \\"nope\\"/);
  // Refused before the backends and the admin listener: none of them said a word.
  assert.doesNotMatch(missing.stderr, /admin: http|fronting|backend/);
});

/** Starts `switchboard ...args` and stops it once its stderr matches `ready`; returns the stderr. */
async function runUntil(
  args: string[],
  env: NodeJS.ProcessEnv,
  ...said: (RegExp | (() => Promise<void>))[]
): Promise<string> {
  const child = spawn(process.execPath, [MAIN, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  try {
    // Each pattern waited for in turn; a function between them acts (edits the file, say).
    for (const step of said) {
      if (typeof step === 'function') {
        await step();
        continue;
      }
      await until(
        () => {
          if (child.exitCode !== null) throw new Error(`switchboard exited: ${stderr}`);
          return step.test(stderr) || undefined;
        },
        () => `switchboard to say ${String(step)}; it said: ${stderr}`,
        { timeoutMs: 30_000 },
      );
    }
    return stderr;
  } finally {
    child.kill('SIGTERM');
    await once(child, 'close');
  }
}

/** A port on 127.0.0.1 that something else holds until the test ends. */
async function takenPort(t: TestContext): Promise<number> {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  return (taken.address() as AddressInfo).port;
}
