// The npm package: `npm pack` holds what switchboard needs to run and nothing of its tests or
// benchmarks; installed from the tarball into an empty directory (no TypeScript build, no dev
// dependencies), its `switchboard up` serves the bundled example servers and answers a call.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { eventually } from '../support/poll.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

test('the packed tarball installs into an empty directory and serves', { timeout: 5 * 60_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-package-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // --ignore-scripts: the tarball is made from the build already in dist/, as a release makes it.
  const packed = await run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  const files = info!.files.map((f) => f.path);
  for (const needed of [
    'dist/src/cli/main.js',
    'dist/src/trust/audit-worker.js',
    'dist/src/backends/watchdog-process.js',
    'dist/examples/servers/clock.js',
    'dist/examples/servers/notes.js',
    'schema/switchboard.schema.json',
    'README.md',
    'LICENSE',
    'docs/configuration.md',
  ])
    assert.ok(files.includes(needed), `the package holds ${needed}`);
  for (const path of files) {
    assert.doesNotMatch(path, /^(dist\/)?(test|bench)\//, `no tests or benchmarks: ${path}`);
    assert.doesNotMatch(path, /\.map$/, `no source maps: ${path}`);
    assert.doesNotMatch(path, /^src\//, `no TypeScript sources: ${path}`);
  }

  const app = join(dir, 'app');
  await mkdir(app);
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
  // Without install scripts: better-sqlite3's own native build (node-gyp when no prebuilt binary
  // can be fetched) takes minutes here, so the one this checkout built (same version, same Node)
  // is put in its place. The package's own install-time script is run below, by itself.
  await run(
    npm,
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, info!.filename)],
    { cwd: app, maxBuffer: 64 * 1024 * 1024 },
  );
  const modules = join(app, 'node_modules');
  await cp(join(ROOT, 'node_modules', 'better-sqlite3', 'build'), join(modules, 'better-sqlite3', 'build'), {
    recursive: true,
  });
  assert.ok(!existsSync(join(modules, 'typescript')), 'no dev dependencies');
  const installed = join(modules, 'mcp-switchboard');
  assert.ok(!existsSync(join(installed, 'tsconfig.json')));
  // What npm runs as `prepare` where it runs it: outside a checkout it builds nothing (there is
  // no tsc to build with) and succeeds.
  const main = join(installed, 'dist', 'src', 'cli', 'main.js');
  const before = (await stat(main)).mtimeMs;
  await run(npm, ['run', 'prepare'], { cwd: installed });
  assert.equal((await stat(main)).mtimeMs, before, 'nothing was rebuilt');

  const bin = join(modules, '.bin', 'switchboard');
  const child = spawn(bin, ['up', '--port', '0', '--log-format', 'json'], {
    cwd: app,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, XDG_STATE_HOME: join(dir, 'state') },
  });
  t.after(() => void child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  await eventually(
    'the installed switchboard to front its servers',
    () => /fronting 2 of 2 servers/.test(stderr) && /Streamable HTTP: http:\/\/\S+?\/mcp/.test(stderr),
    60_000,
  );
  const url = /Streamable HTTP: (http:\/\/\S+?\/mcp)/.exec(stderr)![1]!;
  // As a newcomer does: the token from the file the start line names.
  const endpoint = stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg?: string; tokenFile?: string })
    .find((l) => l.msg?.startsWith('Streamable HTTP: '));
  const tokenFile = endpoint!.tokenFile!;
  const headers = { authorization: `Bearer ${readFileSync(tokenFile, 'utf8').trim()}` };
  const client = new Client({ name: 'package-host', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  t.after(() => client.close());
  // Two servers: their names carry the server's prefix.
  const result = await client.callTool({ name: 'clock_now', arguments: { timeZone: 'UTC' } });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.match(JSON.stringify(result.content), /UTC|Coordinated Universal Time/);
});
