// A list whose read failed is read again later, on a timer, through a real host: a backend that
// announces its changes (so is never re-read on a listing) still has its tools served once its
// lists read, hosts that listed meanwhile hear list_changed, the backoff grows while the read keeps
// failing, only the first failure is a warning, and a method the backend does not have is not
// asked for again.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { LIST_RETRY_FIRST_MS } from '../../src/gateway/list-retries.js';
import { connect, faulty, json } from '../faults/helpers.js';
import { captureLog } from '../support/log-capture.js';
import { eventually } from '../support/poll.js';
import { startGateway } from '../support/start-switchboard.js';

/** The processes whose command line names `text`. */
function processesNaming(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(text)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** A file whose existence opens the backend's tools/list, in a directory its sandbox may read. */
async function gateFile(t: TestContext): Promise<{ file: string; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-list-gate-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return { file: join(dir, 'lists-work'), dir };
}

const failures = (log: ReturnType<typeof captureLog>, msg: string) =>
  log.lines().filter((line) => line['msg'] === msg && line['backend'] === 'f');

test('a failed tools/list is read again later, and hosts that listed hear the tools arrive', async (t) => {
  const gate = await gateFile(t);
  const log = captureLog('debug');
  const sb = await startGateway(
    t,
    { servers: { f: faulty(['--list-gate', gate.file], { sandbox: { read: [gate.dir] } }) } },
    { log: log.logger },
  );
  let changed = 0;
  const client = await connect(t, sb, () => changed++);
  // The backend is up and says it announces its changes; its tools could not be read.
  assert.deepEqual((await client.listTools()).tools, []);
  await eventually(
    'the read failed at least twice',
    () => failures(log, 'list failed again').length >= 1,
    20_000,
  );

  await writeFile(gate.file, '');
  await eventually('hosts are told the tools changed', () => changed > 0, 40_000);
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  assert.ok(names.includes('echo'), `listed: ${names.join(', ')}`);
  assert.deepEqual(json(await client.callTool({ name: 'echo', arguments: { n: 1 } }))['arguments'], { n: 1 });

  // One warning, the failures after it at debug level with a growing delay, and the recovery said.
  const warned = failures(log, 'list failed; reading it again later');
  assert.equal(warned.length, 1);
  assert.equal(warned[0]!['level'], 40);
  assert.equal(warned[0]!['inMs'], LIST_RETRY_FIRST_MS);
  assert.match(String(warned[0]!['err']), /tools\/list failure 1/);
  const again = failures(log, 'list failed again');
  const delays = again.map((line) => line['inMs'] as number);
  assert.ok(
    delays.every((ms, i) => ms === LIST_RETRY_FIRST_MS * 2 ** (i + 1)),
    `delays: ${delays.join(', ')}`,
  );
  assert.equal(failures(log, 'list read after failures').length, 1);
});

test('a backend that went down stops being read again from a timer', async (t) => {
  const gate = await gateFile(t);
  const log = captureLog('debug');
  const sb = await startGateway(
    t,
    {
      servers: {
        f: faulty(['--list-gate', gate.file], { restart: { initialMs: 60_000 } }),
      },
    },
    { log: log.logger },
  );
  await eventually(
    'the first read failed',
    () => failures(log, 'list failed; reading it again later').length === 1,
    20_000,
  );
  // The backend dies, its restart a minute off: nothing may read its lists until it is back.
  for (const pid of processesNaming(gate.file)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone with the other: bwrap and the server it runs end together.
    }
  }
  await eventually('the backend is down', () => sb.gateway.backends.get('f')!.state !== 'ready', 20_000);
  const before = failures(log, 'list failed again').length;
  await new Promise((resolve) => setTimeout(resolve, 4 * LIST_RETRY_FIRST_MS));
  assert.equal(failures(log, 'list failed again').length, before);
});

test('a list method the backend does not have is not asked for again', async (t) => {
  const log = captureLog('debug');
  const sb = await startGateway(t, { servers: { f: faulty(['--no-templates']) } }, { log: log.logger });
  const client = await connect(t, sb);
  await eventually(
    'the templates read failed',
    () => failures(log, 'list failed: the backend has no such method').length === 1,
    20_000,
  );
  await new Promise((resolve) => setTimeout(resolve, 4 * LIST_RETRY_FIRST_MS));
  assert.equal(failures(log, 'list failed: the backend has no such method').length, 1);
  assert.equal(failures(log, 'list failed; reading it again later').length, 0);
  assert.equal(failures(log, 'list failed again').length, 0);
  // The other lists are served as ever, and listings do not ask again (the faulty server
  // announces no resource changes, so a listing would otherwise read a stale list again).
  assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'echo'));
  for (let i = 0; i < 3; i++) {
    assert.deepEqual((await client.listResourceTemplates()).resourceTemplates, []);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(failures(log, 'list failed: the backend has no such method').length, 1);
});

test('a backend that declares tools and answers tools/list with -32601 is read again, not written off', async (t) => {
  const gate = await gateFile(t);
  const log = captureLog('debug');
  const sb = await startGateway(
    t,
    {
      servers: {
        f: faulty(['--list-gate', gate.file, '--list-gate-code=-32601'], {
          sandbox: { read: [gate.dir] },
        }),
      },
    },
    { log: log.logger },
  );
  let changed = 0;
  const client = await connect(t, sb, () => changed++);
  assert.deepEqual((await client.listTools()).tools, []);
  await eventually(
    'the read failed',
    () => failures(log, 'list failed; reading it again later').length === 1,
  );
  assert.equal(failures(log, 'list failed: the backend has no such method').length, 0);
  await writeFile(gate.file, '');
  await eventually('hosts are told the tools arrived', () => changed > 0, 40_000);
  assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'echo'));
});
