// `switchboard init` writes a starter config from the hosts' MCP files (found in their usual
// places, or given), refuses to overwrite, and what it writes validates; `switchboard doctor`
// says ok, warn or fail per check with a fix, and exits 1 on a failure.
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { runCli } from './run-cli.js';

async function sandbox(t: TestContext): Promise<{ dir: string; env: NodeJS.ProcessEnv }> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-init-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const home = join(dir, 'home');
  await mkdir(home);
  const env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_STATE_HOME: join(dir, 'state'),
  };
  return { dir, env };
}

test('init imports Claude Desktop and Cursor servers from their usual files, and the result validates', async (t) => {
  const { dir, env } = await sandbox(t);
  const home = env.HOME!;
  await mkdir(join(home, '.config', 'Claude'), { recursive: true });
  await writeFile(
    join(home, '.config', 'Claude', 'claude_desktop_config.json'),
    JSON.stringify({
      mcpServers: {
        memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], autoApprove: [] },
        switchboard: { command: 'node', args: ['main.js', 'up', '--stdio'] },
      },
    }),
  );
  await mkdir(join(home, '.cursor'));
  await writeFile(
    join(home, '.cursor', 'mcp.json'),
    JSON.stringify({
      mcpServers: {
        remote: { url: 'https://mcp.example.com/mcp' },
        memory: { command: 'other' },
        // A name every object answers to is a server like any other.
        constructor: { command: 'node', args: ['c.js'] },
      },
    }),
  );
  const run = await runCli(['init'], { env, cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /Claude Desktop: .*claude_desktop_config\.json: imported memory/);
  assert.match(run.stderr, /Cursor: .*mcp\.json: imported remote/);
  assert.match(run.stderr, /Next steps:/);
  const file = join(dir, 'switchboard.yaml');
  const text = await readFile(file, 'utf8');
  assert.match(text, /memory:/);
  assert.match(text, /remote:/);
  assert.match(text, /constructor:/);
  assert.doesNotMatch(text, /switchboard:\n\s+command/, 'switchboard itself is not imported');
  assert.equal((await stat(file)).mode & 0o777, 0o600);
  const valid = await runCli(['validate', '--offline', '--config', file], { env, cwd: dir });
  assert.equal(valid.code, 0, valid.stderr);
  assert.match(valid.stderr, /valid; switchboard format, 3 backends/);

  const again = await runCli(['init'], { env, cwd: dir });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /exists; not overwritten \(use --force/);
  assert.equal(await readFile(file, 'utf8'), text, 'the file is untouched');
});

test('init --from reads a VS Code mcp.json (servers), and --force overwrites', async (t) => {
  const { dir, env } = await sandbox(t);
  const from = join(dir, 'mcp.json');
  await writeFile(
    from,
    JSON.stringify({
      servers: { files: { type: 'stdio', command: 'node', args: ['server.js', dir] } },
      inputs: [{ type: 'promptString', id: 'token', password: true }],
    }),
  );
  await writeFile(join(dir, 'switchboard.yaml'), 'servers: {}\n');
  const run = await runCli(['init', '--from', from, '--force'], { env, cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /imported files/);
  // What the written file no longer says is said here: the host-only key dropped, the directory.
  assert.match(run.stderr, /warning: given file: .*mcp\.json: inputs: ignored/);
  assert.match(run.stderr, /warning: given file: .*servers\.files: its arguments name .*sandbox\.write/);
  const valid = await runCli(['validate', '--offline', '--config', 'switchboard.yaml'], { env, cwd: dir });
  assert.equal(valid.code, 0, valid.stderr);
  assert.match(valid.stderr, /files\s+stdio\s+node server\.js/);
});

test('init with no host file writes an example that validates', async (t) => {
  const { dir, env } = await sandbox(t);
  const run = await runCli(['init', '--out', 'sb.yaml'], { env, cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /No host MCP file found/);
  // Its header's command checks the file written, by the name it was given.
  assert.match(
    await readFile(join(dir, 'sb.yaml'), 'utf8'),
    /^# Check it with: switchboard validate --config sb\.yaml$/m,
  );
  assert.equal((await runCli(['validate', '--offline', '--config', 'sb.yaml'], { env, cwd: dir })).code, 0);
});

test('doctor fails a backend whose command is not on its PATH, and says how to fix it', async (t) => {
  const { dir, env } = await sandbox(t);
  const file = join(dir, 'switchboard.yaml');
  await writeFile(
    file,
    `http: { port: 0 }\nadmin: { port: 0 }\nsandbox: { mode: none }\nservers:\n  good: { command: ${process.execPath} }\n  lost: { command: no-such-mcp-cmd, env: { PATH: /nonexistent } }\n  nowhere: { command: ${process.execPath}, cwd: ${join(dir, 'gone')} }\n`,
  );
  const run = await runCli(['doctor', '--config', file], { env, cwd: dir });
  assert.equal(run.code, 1, run.stdout + run.stderr);
  assert.match(run.stdout, /^ok\s+node\s+v\d+/m);
  assert.match(run.stdout, /^ok\s+servers\.good\s+/m);
  assert.match(
    run.stdout,
    /^fail\s+servers\.lost\s+command "no-such-mcp-cmd" not found on the PATH it sees: \/nonexistent/m,
  );
  assert.match(run.stdout, /fix: give an absolute command path, or set servers\.lost\.env\.PATH/);
  assert.match(run.stdout, /^fail\s+servers\.nowhere\s+cwd ".*gone" does not exist/m);
  assert.match(run.stdout, /^warn\s+sandbox\s+off/m);
  assert.match(run.stderr, /2 failed/);
});

test("doctor warns of a script under /tmp that the sandbox's private /tmp hides, not of one it binds", async (t) => {
  const { dir, env } = await sandbox(t);
  const elsewhere = `/tmp/sb-doctor-elsewhere-${process.pid}`;
  const node = process.execPath;
  const file = join(dir, 'switchboard.yaml');
  await writeFile(
    file,
    [
      'http: { port: 0 }',
      'admin: { port: 0 }',
      'servers:',
      `  hidden: { command: ${node}, args: [${elsewhere}/server.mjs] }`,
      `  bound: { command: ${node}, args: [${elsewhere}/server.mjs], sandbox: { read: [${elsewhere}] } }`,
      `  flagged: { command: ${node}, args: ['--require=${elsewhere}/pre.cjs', server.mjs] }`,
      // Its working directory (the config's here) is bound in: what lies in it is there.
      `  near: { command: ${node}, args: [${join(dir, 'server.mjs')}] }`,
      '',
    ].join('\n'),
  );
  const run = await runCli(['doctor', '--config', file], { env, cwd: dir });
  assert.match(
    run.stdout,
    /^warn\s+servers\.hidden\s+names \/tmp\/sb-doctor-elsewhere-\d+\/server\.mjs, under \/tmp: the sandbox gives the server a \/tmp of its own/m,
  );
  assert.match(run.stdout, /fix: add its directory to servers\.hidden\.sandbox\.read/);
  assert.match(run.stdout, /^warn\s+servers\.flagged\s+names \/tmp\/sb-doctor-elsewhere-\d+\/pre\.cjs/m);
  assert.doesNotMatch(run.stdout, /servers\.(bound|near)\s+names/);
});

test('doctor warns of a state directory others can read, and passes a clean setup', async (t) => {
  const { dir, env } = await sandbox(t);
  const state = join(env.XDG_STATE_HOME!, 'switchboard');
  await mkdir(state, { recursive: true });
  await chmod(state, 0o755);
  const file = join(dir, 'switchboard.yaml');
  await writeFile(
    file,
    `http: { port: 0 }\nadmin: { port: 0 }\nservers:\n  good: { command: ${process.execPath} }\n`,
  );
  const loose = await runCli(['doctor', '--config', file], { env, cwd: dir });
  assert.match(loose.stdout, /^warn\s+state dir\s+.* is 0755/m);
  assert.match(loose.stdout, new RegExp(`fix: chmod 0700 ${state}`));
  await chmod(state, 0o700);
  const clean = await runCli(['doctor', '--config', file], { env, cwd: dir });
  assert.match(clean.stdout, /^ok\s+state dir/m);
  // The sandbox may be missing on this machine (a warning under mode auto), never a failure here.
  assert.equal(clean.code, 0, clean.stdout + clean.stderr);
});

test('doctor names the local token file hosts send, and warns of a front open to every local process', async (t) => {
  const { dir, env } = await sandbox(t);
  const file = join(dir, 'switchboard.yaml');
  await writeFile(
    file,
    `http: { port: 0 }\nadmin: { port: 0 }\nservers:\n  good: { command: ${process.execPath} }\n`,
  );
  const local = await runCli(['doctor', '--config', file], { env, cwd: dir });
  const token = join(env.XDG_STATE_HOME!, 'switchboard', 'http-token');
  assert.match(
    local.stdout,
    new RegExp(
      `^ok\\s+http auth\\s+local token: hosts send the one in ${token} \\(made at first start\\)$`,
      'm',
    ),
  );
  await writeFile(
    file,
    `http: { port: 0, auth: { mode: none } }\nadmin: { port: 0 }\nservers:\n  good: { command: ${process.execPath} }\n`,
  );
  const open = await runCli(['doctor', '--config', file], { env, cwd: dir });
  assert.match(
    open.stdout,
    /^warn\s+http auth\s+none: any process on this machine can call every tool as the caller http/m,
  );
  assert.match(
    open.stdout,
    /fix: drop http\.auth\.mode to use the local token, or configure http\.auth\.keys/,
  );
});

test('doctor fails an admin port something holds, naming the setting to change', async (t) => {
  const { dir, env } = await sandbox(t);
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.after(() => holder.close());
  const held = (holder.address() as AddressInfo).port;
  const file = join(dir, 'switchboard.yaml');
  await writeFile(file, `http: { port: 0 }\nadmin: { port: ${held} }\nservers: {}\n`);
  const run = await runCli(['doctor', '--config', file], { env, cwd: dir });
  assert.equal(run.code, 1, run.stdout);
  assert.match(
    run.stdout,
    new RegExp(`^fail\\s+admin port\\s+127\\.0\\.0\\.1:${held} cannot be used \\(in use`, 'm'),
  );
  assert.match(run.stdout, /fix: stop what holds it, or choose another with admin\.port/);
  await writeFile(file, `http: { port: 0 }\nadmin: { enabled: false }\nservers: {}\n`);
  assert.doesNotMatch((await runCli(['doctor', '--config', file], { env, cwd: dir })).stdout, /admin port/);
});
