// Start-up that holds no host hostage: the fronts serve at once with the backends that are up, a
// backend that comes up later is announced with list_changed, a call to one of its names waits for
// it (so does a search in search mode), and startup.waitMs makes a host's handshake and first
// lists wait for the rest instead; a
// backend whose script its sandbox cannot see (under the host's /tmp) is named with the fix.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import { startSwitchboard, type Switchboard } from '../../src/switchboard.js';
import { connect, faulty, toolNames } from '../faults/helpers.js';
import { captureLog } from '../support/log-capture.js';
import { until } from '../support/poll.js';
import { configFor } from '../support/start-switchboard.js';
import { Inbox } from './harness.js';

/** A backend `late` that stays in its handshake until `open()`, beside a backend `now`. */
async function withLateBackend(
  t: TestContext,
  extra: Partial<ConfigInput> = {},
): Promise<{ sb: Switchboard; open: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-late-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const gate = join(dir, 'up');
  const sb = await startSwitchboard({
    config: configFor({
      servers: {
        now: faulty(),
        late: faulty(['--init-gate', gate], { sandbox: { read: [dir] } }),
      },
      namespacing: { mode: 'always' },
      ...extra,
    }),
    http: true,
    awaitBackends: false,
  });
  t.after(() => sb.stop());
  return { sb, open: () => writeFile(gate, '') };
}

test('hosts are served while a backend hangs in its handshake, and hear list_changed when it is up', async (t) => {
  const { sb, open } = await withLateBackend(t);
  let settled = false;
  void sb.ready.then(() => (settled = true));
  const changes = new Inbox<number>();
  const client = await connect(t, sb, () => changes.push(changes.items.length + 1));
  const first = await until(async () => {
    const names = await toolNames(client);
    return names.includes('now_echo') ? names : undefined;
  }, "the ready backend's tools");
  assert.ok(!first.some((name) => name.startsWith('late_')), 'the hanging backend has no names yet');
  assert.equal(settled, false, 'the start is not over');

  const before = changes.items.length;
  await open();
  await changes.next((n) => n > before);
  await until(async () => ((await toolNames(client)).includes('late_echo') ? true : undefined), 'late_echo');
  await sb.ready;
  assert.deepEqual(sb.failedBackends, []);
});

test("startup.waitMs makes a host's handshake and first list wait for backends still starting", async (t) => {
  const { sb, open } = await withLateBackend(t, { startup: { waitMs: 600_000 } });
  let lateAtHandshake: string | undefined;
  const connecting = connect(t, sb).then((client) => {
    lateAtHandshake = sb.gateway.backends.get('late')!.state;
    return client;
  });
  await open();
  const client = await connecting;
  assert.equal(lateAtHandshake, 'ready', 'the handshake was answered once the late backend was up');
  const names = await toolNames(client);
  assert.ok(names.includes('late_echo') && names.includes('now_echo'), names.join(', '));
});

test('a search in search mode waits for backends still starting rather than finding nothing', async (t) => {
  const { sb, open } = await withLateBackend(t, { catalog: { mode: 'search' } });
  const client = await connect(t, sb);
  const search = client.callTool({ name: 'search_tools', arguments: { query: 'echo' } });
  await open();
  const found = ((await search).structuredContent as { tools: { name: string }[] }).tools.map((x) => x.name);
  assert.ok(found.includes('late_echo'), found.join(', '));
});

test('a call to a name of a backend still starting waits for it rather than failing as unknown', async (t) => {
  const { sb, open } = await withLateBackend(t);
  const client = await connect(t, sb);
  const call = client.callTool({ name: 'late_echo', arguments: {} });
  await open();
  const result = (await call) as { isError?: boolean };
  assert.notEqual(result.isError, true);
});

test('a backend that fails its first start is reported when the start is over', async (t) => {
  const sb = await startSwitchboard({
    config: configFor({ servers: { ok: faulty(), gone: faulty(['--exit-at-start']) } }),
    http: true,
    awaitBackends: false,
  });
  t.after(() => sb.stop());
  await sb.ready;
  assert.deepEqual(
    sb.failedBackends.map((f) => f.name),
    ['gone'],
  );
});

test('a backend whose script lies under /tmp outside its sandbox is named at start, with the fix', async (t) => {
  const elsewhere = `/tmp/sb-startup-elsewhere-${process.pid}`;
  const log = captureLog('warn');
  const sb = await startSwitchboard({
    config: configFor({
      servers: {
        hidden: { command: process.execPath, args: [`${elsewhere}/server.mjs`] },
        bound: {
          command: process.execPath,
          args: [`${elsewhere}/server.mjs`],
          sandbox: { read: [elsewhere] },
        },
      },
    }),
    log: log.logger,
    awaitBackends: false,
  });
  t.after(() => sb.stop());
  await sb.ready;
  const said = log.lines().filter((line) => /under \/tmp/.test(String(line['msg'])));
  assert.deepEqual(
    said.map((line) => line['backend']),
    ['hidden'],
  );
  assert.match(
    String(said[0]!['msg']),
    /^backend hidden names \/tmp\/sb-startup-elsewhere-\d+\/server\.mjs, under \/tmp: the sandbox gives the server a \/tmp of its own, without it: add its directory to servers\.hidden\.sandbox\.read/,
  );
});
