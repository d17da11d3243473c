// `switchboard status | tools | call` against a running `switchboard up` (both real processes):
// they find the admin listener through admin.json in the state directory; call exits 1 when a deny
// rule refuses it (and the refusal is audited), and tools marks what the policy refuses; each has
// --help; nobody running is a clear error.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { until } from '../support/poll.js';
import { example, NOTES, tempDir } from './helpers.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

function run(env: NodeJS.ProcessEnv, args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, out, err }));
  });
}

async function up(
  t: TestContext,
): Promise<{ env: NodeJS.ProcessEnv; stateDir: string; stderr: () => string }> {
  const home = await tempDir(t, 'sb-cli-');
  const env = { XDG_STATE_HOME: home, SWITCHBOARD_ADMIN_URL: '', SWITCHBOARD_ADMIN_TOKEN: '' };
  delete (env as Record<string, string>).SWITCHBOARD_ADMIN_URL;
  delete (env as Record<string, string>).SWITCHBOARD_ADMIN_TOKEN;
  const config = join(home, 'switchboard.json');
  await writeFile(
    config,
    JSON.stringify({
      servers: { notes: example(NOTES) },
      admin: { port: 0 },
      policy: {
        rules: [{ name: 'no-admin-writes', callers: ['admin:*'], tools: ['add_note'], effect: 'deny' }],
      },
    }),
  );
  const child = spawn(process.execPath, [MAIN, 'up', '--config', config, '--port', '0', '--no-watch'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(() => void child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const stateDir = join(home, 'switchboard');
  await until(
    () => {
      if (child.exitCode !== null) throw new Error(`switchboard exited: ${stderr}`);
      return (
        (/fronting 1 of 1 servers/.test(stderr) && existsSync(join(stateDir, 'admin.json'))) || undefined
      );
    },
    'switchboard to be up with its admin listener',
    { timeoutMs: 30_000 },
  );
  return { env, stateDir, stderr: () => stderr };
}

test('status, tools and call work against a running switchboard, and call is refused by a deny rule', async (t) => {
  const { env, stateDir, stderr } = await up(t);
  // Not a terminal (a host's log file, here a pipe): the link without its token, and the file.
  assert.match(
    stderr(),
    /admin: http:\/\/127\.0\.0\.1:\d+\/ \(its token, for \?token=, is in \S+\/admin-token\)/,
    'up names the dashboard and its token file',
  );
  const token = readFileSync(join(stateDir, 'admin-token'), 'utf8').trim();
  assert.ok(!stderr().includes(token), 'the admin token is not in the log');

  const status = await run(env, ['status']);
  assert.equal(status.code, 0, JSON.stringify(status));
  assert.match(status.out, /^notes\s+ready\s+1\/1\s+0\s+closed/m);
  // Pointed at the MCP front instead (an easy mix-up: both are switchboard's URLs), it says so.
  const mcp = /Streamable HTTP: (http:\/\/\S+\/mcp)/.exec(stderr())?.[1];
  assert.ok(mcp, 'up names its MCP endpoint');
  const wrong = await run(env, ['status', '--url', mcp, '--token', 'x']);
  assert.equal(wrong.code, 1);
  assert.match(wrong.err, /is an MCP endpoint, not switchboard's admin listener \(\d+\): give the admin URL/);
  // The local token goes only to the listener admin.json names: not to a port mistyped, or
  // another host's.
  const heard: string[] = [];
  const elsewhere = createServer((req, res) => {
    heard.push(req.headers.authorization ?? '');
    res.end('{}');
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => elsewhere.close(() => resolve())));
  const other = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
  const withheld = await run(env, ['status', '--url', other]);
  assert.equal(withheld.code, 1);
  assert.match(withheld.err, /no admin token for http:\/\/127\.0\.0\.1:\d+: give --token/);
  assert.deepEqual(heard, [], 'nothing was sent there');
  const recorded = (JSON.parse(readFileSync(join(stateDir, 'admin.json'), 'utf8')) as { url: string }).url;
  assert.equal(
    (await run(env, ['status', '--url', `${recorded}/api/v1`])).code,
    0,
    'its own URL, the prefix too',
  );
  assert.match((await run(env, ['status', '--url', 'not a url'])).err, /is not a URL/);
  const json = await run(env, ['status', '--json']);
  assert.equal((JSON.parse(json.out) as { backends: { name: string }[] }).backends[0]?.name, 'notes');

  const tools = await run(env, ['tools']);
  assert.equal(tools.code, 0, tools.err);
  assert.match(tools.out, /^list_notes\s+notes\s+allow\s+/m);
  // Listed for the operator to see, and marked as what `call` will refuse them.
  assert.match(tools.out, /^add_note\s+notes\s+deny\s+/m);
  assert.match(tools.out, /^1 tool is refused to admin:\S+ by policy/m);

  const ok = await run(env, ['call', 'list_notes']);
  assert.equal(ok.code, 0, ok.err);
  assert.match(ok.out, /welcome/);
  const refused = await run(env, ['call', 'add_note', '--args', '{"title":"t","text":"x"}']);
  assert.equal(refused.code, 1);
  assert.match(refused.err, /add_note failed/);

  const db = openTrustDb(join(stateDir, 'audit.sqlite'), { readonly: true });
  t.after(() => db.close());
  await until(
    () =>
      db
        .prepare(
          "SELECT 1 FROM audit WHERE caller_kind = 'admin' AND target_name = 'add_note' AND decision = 'deny'",
        )
        .get(),
    'the refusal to be audited',
    { timeoutMs: 10_000 },
  );
});

test('each command has --help (exit 0), and with no switchboard running says so (exit 1)', async (t) => {
  const home = await tempDir(t, 'sb-cli-none-');
  const env = { XDG_STATE_HOME: home };
  for (const command of ['status', 'tools', 'call']) {
    const help = await run(env, [command, '--help']);
    assert.equal(help.code, 0);
    assert.match(help.out, new RegExp(`^Usage: switchboard ${command}`));
    const args = command === 'call' ? [command, 'list_notes'] : [command];
    const none = await run({ ...env, SWITCHBOARD_ADMIN_URL: '', SWITCHBOARD_ADMIN_TOKEN: '' }, args);
    assert.equal(none.code, 1);
    assert.match(none.err, /no running switchboard found/);
  }
  const gone = await run(env, ['status', '--url', 'http://127.0.0.1:1', '--token', 'x']);
  assert.equal(gone.code, 1);
  assert.match(gone.err, /cannot reach switchboard's admin listener/);
  // An admin.json left by a switchboard that did not stop cleanly: its port is not trusted with
  // the token (another process may listen there now).
  const ended = spawnSync(process.execPath, ['-e', '']).pid!;
  await mkdir(join(home, 'switchboard'), { recursive: true });
  await writeFile(
    join(home, 'switchboard', 'admin.json'),
    JSON.stringify({ url: 'http://127.0.0.1:1', token: 'stale-token', pid: ended }),
  );
  const stale = await run(env, ['status']);
  assert.equal(stale.code, 1);
  assert.match(stale.err, new RegExp(`names process ${ended}, which is not running`));
});
