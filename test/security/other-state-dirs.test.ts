// Threat: a backend of a switchboard whose state directory XDG_STATE_HOME moved reads another
// switchboard's tokens from the default state directory (~/.local/state/switchboard), where one
// a host started without that variable (a Claude Desktop entry, say) keeps its admin and HTTP
// tokens and its trust database. Both directories are hidden from its view; one moved by a backend
// that may write above it (or the config file's directory, moved) is not left in sight.
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { connectHttp } from '../support/mcp-clients.js';
import { until } from '../support/poll.js';
import { spawnSwitchboard, type SwitchboardProcess } from '../support/switchboard-process.js';
import { SNOOP, outsideTmp, startFromFile, withCheckout } from './snoop.js';

const CANARY = 'canary-other-state-dir-81c3';

/** Once its one backend is up (the front listens before). */
function started(sb: SwitchboardProcess): Promise<true> {
  return until(
    () => sb.logLines().some((l) => /fronting 1 of 1 servers/.test(String(l.msg))) || undefined,
    'the backend to start',
  );
}

test('a backend sees neither its own state directory nor the default one another switchboard uses', async (t) => {
  const home = outsideTmp(t, 'home');
  const usual = join(home, '.local', 'state', 'switchboard');
  mkdirSync(usual, { recursive: true });
  for (const name of ['admin-token', 'http-token']) writeFileSync(join(usual, name), `${CANARY}-${name}\n`);
  const moved = outsideTmp(t, 'xdg');
  const own = join(moved, 'switchboard', 'admin-token');
  const files = [join(usual, 'admin-token'), join(usual, 'http-token'), own];
  const spy = withCheckout({
    command: process.execPath,
    args: [SNOOP, ...files.flatMap((f) => ['--read', f])],
  });
  const sb = await spawnSwitchboard(
    t,
    { servers: { spy }, admin: { port: 0 } },
    { ...process.env, HOME: home, XDG_STATE_HOME: moved },
  );
  await started(sb);
  const { client } = await connectHttp(t, sb.url);
  const result = (await client.callTool({ name: 'snoop', arguments: {} })) as { content: { text: string }[] };
  const raw = JSON.stringify(result);
  const reads = (JSON.parse(result.content[0]!.text) as { reads: Record<string, string> }).reads;
  assert.deepEqual(Object.keys(reads).sort(), [...files].sort());
  for (const [file, got] of Object.entries(reads))
    assert.ok(got.startsWith('failed: ENOENT'), `the backend read ${file}: ${got.slice(0, 60)}`);
  assert.ok(!raw.includes(CANARY), 'no token of the other state directory in what the backend saw');
});

test('a state directory reached through a symbolic link is hidden, and the backend still starts', async (t) => {
  const real = outsideTmp(t, 'real-state');
  const link = join(outsideTmp(t, 'link'), 'state');
  symlinkSync(real, link);
  mkdirSync(join(real, 'switchboard'), { mode: 0o700 });
  writeFileSync(join(real, 'switchboard', 'admin-token'), `${CANARY}-linked\n`);
  const files = [join(link, 'switchboard', 'admin-token'), join(real, 'switchboard', 'admin-token')];
  const spy = withCheckout({
    command: process.execPath,
    args: [SNOOP, ...files.flatMap((f) => ['--read', f])],
  });
  const sb = await spawnSwitchboard(
    t,
    { servers: { spy }, admin: { enabled: false } },
    { ...process.env, XDG_STATE_HOME: link },
  );
  await started(sb);
  const { client } = await connectHttp(t, sb.url);
  const result = (await client.callTool({ name: 'snoop', arguments: {} })) as { content: { text: string }[] };
  const reads = (JSON.parse(result.content[0]!.text) as { reads: Record<string, string> }).reads;
  for (const [file, got] of Object.entries(reads))
    assert.ok(got.startsWith('failed: ENOENT'), `the backend read ${file}: ${got.slice(0, 60)}`);
});

test('a backend that may write above the state directory and moves it is not started again', async (t) => {
  const home = outsideTmp(t, 'above');
  const parent = join(home, 'parent');
  const moved = join(home, 'parent', 'moved');
  const token = join(moved, 'switchboard', 'admin-token');
  const args = [SNOOP, '--rename', `${join(parent, 'state')}=${moved}`, '--read', token];
  const spy = withCheckout({ command: process.execPath, args, sandbox: { write: [parent] } });
  const sb = await spawnSwitchboard(
    t,
    { servers: { spy }, admin: { port: 0 } },
    { ...process.env, HOME: home, XDG_STATE_HOME: join(parent, 'state') },
  );
  await started(sb);
  assert.ok(
    sb.logLines().some((l) => /backend spy may write in .*, above switchboard's state/.test(String(l.msg))),
    'the risk is said at start',
  );
  const { client } = await connectHttp(t, sb.url);
  const first = (await client.callTool({ name: 'snoop', arguments: {} })) as { content: { text: string }[] };
  assert.equal((JSON.parse(first.content[0]!.text) as { renamed: boolean }).renamed, true);
  // Its next start would lay a view by path, and the moved directory would be in sight: refused.
  await until(
    () =>
      sb
        .logLines()
        .some((l) => /is gone or was replaced since switchboard started/.test(JSON.stringify(l))) ||
      undefined,
    'the restart to be refused',
  );
  const again = await client.callTool({ name: 'snoop', arguments: {} }).then(
    (r) => JSON.stringify(r),
    (err: Error) => err.message,
  );
  assert.ok(
    !again.includes(CANARY) && !/"reads"/.test(again),
    `the backend ran again: ${again.slice(0, 200)}`,
  );
});

test("a backend that may write above the config file's directory and moves it is not started again", async (t) => {
  // The config lies in base/outer/cfg, outside the state directory; the backend may write base. Its
  // view hides cfg (a mount there cannot be renamed), so it moves outer, which holds it.
  const base = outsideTmp(t, 'above-config');
  const outer = join(base, 'outer');
  const cfg = join(outer, 'cfg');
  const moved = join(base, 'outer-moved');
  mkdirSync(cfg, { recursive: true });
  const file = join(cfg, 'switchboard.json');
  const args = [SNOOP, '--rename', `${outer}=${moved}`, '--read', join(moved, 'cfg', 'switchboard.json')];
  const spy = withCheckout({ command: process.execPath, args, sandbox: { write: [base] } });
  writeFileSync(
    file,
    JSON.stringify({
      servers: { spy },
      http: { port: 0, auth: { mode: 'none' } },
      admin: { enabled: false },
      // What the config holds that no backend may read.
      redaction: { patterns: [CANARY] },
    }),
  );
  const { sb, log } = await startFromFile(t, file);
  assert.ok(
    log
      .lines()
      .some((l) =>
        String(l['msg']).startsWith(`backend spy may write in ${base}, above switchboard's state or files`),
      ),
    'the risk is said at start',
  );
  const { client } = await connectHttp(t, sb.http!.url);
  const first = (await client.callTool({ name: 'snoop', arguments: {} })) as { content: { text: string }[] };
  assert.equal((JSON.parse(first.content[0]!.text) as { renamed: boolean }).renamed, true);
  // Its next start would lay a view by path, and the config's directory would be in sight, moved.
  await until(
    () => log.text().includes(`${cfg} is gone or was replaced since switchboard started`) || undefined,
    'the restart to be refused',
  );
  const again = await client.callTool({ name: 'snoop', arguments: {} }).then(
    (r) => JSON.stringify(r),
    (err: Error) => err.message,
  );
  assert.ok(!/"reads"/.test(again), `the backend ran again: ${again.slice(0, 200)}`);
  assert.ok(!again.includes('servers'), 'nothing of the config reached the host');
});
