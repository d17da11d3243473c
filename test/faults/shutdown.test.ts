// Graceful shutdown: host calls under way finish (new ones are refused) before backends are ended;
// what is still running at the deadline is cut and reported.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { Inbox } from '../gateway/harness.js';
import { connect, faulty, json, running } from './helpers.js';
import { startGateway } from '../support/start-switchboard.js';
import { spawnSwitchboard } from '../support/switchboard-process.js';
import { connectHttp } from '../support/mcp-clients.js';
import { eventually, until } from '../support/poll.js';

test('a stop lets host calls under way finish and refuses new ones', async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty() }, shutdown: { drainMs: 60_000 } });
  const client = await connect(t, sb);
  const { pid } = json(await client.callTool({ name: 'pids', arguments: {} })) as { pid: number };
  const progress = new Inbox<number>();
  const slow = client.callTool(
    { name: 'slow', arguments: { steps: 10, everyMs: 100 } },
    { onprogress: (p) => progress.push(p.progress) },
  );
  await progress.next();
  const stopped = sb.stop();
  await assert.rejects(
    client.callTool({ name: 'echo', arguments: {} }),
    (err: Error & { code?: number; data?: unknown }) => {
      assert.equal(err.code, -32052);
      assert.deepEqual(err.data, { reason: 'draining' });
      assert.match(err.message, /switchboard is shutting down/);
      return true;
    },
  );
  assert.equal(json(await slow).steps, 10, 'the call under way got its answer');
  assert.deepEqual(await stopped, { cut: [] });
  assert.ok(!running(pid), 'the backend was ended after the drain');
});

test('a stop cuts what is still under way at the drain deadline and says so', async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty() }, shutdown: { drainMs: 200 } });
  const client = await connect(t, sb);
  const progress = new Inbox<number>();
  const hang = client.callTool(
    { name: 'slow', arguments: { steps: 1000, everyMs: 50 } },
    { onprogress: (p) => progress.push(p.progress) },
  );
  hang.catch(() => {});
  await progress.next();
  assert.deepEqual(await sb.stop(), { cut: ['tools/call f/slow'] });
});

test("an operator's call through the admin API is drained and cut as a host's is", async (t) => {
  const sb = await startGateway(t, { servers: { f: faulty() }, shutdown: { drainMs: 300 } });
  const operator = { kind: 'admin' as const, id: 'token' };
  const call = (steps: number) =>
    sb.gateway.dispatch(operator, 'tools/call', { name: 'slow', arguments: { steps, everyMs: 50 } });
  const short = call(2);
  const long = call(1000);
  long.catch(() => {});
  await new Promise((resolve) => setTimeout(resolve, 100));
  const stopped = sb.stop();
  await assert.rejects(call(1), /switchboard is shutting down/);
  assert.equal((json(await short) as { steps: number }).steps, 2, 'waited for');
  await assert.rejects(long, /cut after shutdown\.drainMs/);
  assert.deepEqual(await stopped, { cut: ['tools/call f/slow'] });
});

test('a stop finishes in a process nothing else holds open (no bridge, no front)', async () => {
  // In a process of its own: the test runner's own handles would hide the fault.
  const start = new URL('../../src/switchboard.js', import.meta.url).href;
  const config = new URL('../support/start-switchboard.js', import.meta.url).href;
  const script = `
    import { startSwitchboard } from ${JSON.stringify(start)};
    import { configFor } from ${JSON.stringify(config)};
    const sb = await startSwitchboard({
      config: configFor({ servers: { f: ${JSON.stringify(faulty())} }, bridge: { enabled: false }, audit: { enabled: false } }),
      http: false,
    });
    process.on('exit', (code) => console.log(globalThis.stopped ? 'stopped' : 'exited half stopped', code));
    await sb.stop();
    globalThis.stopped = true;
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  assert.equal(out.trim(), 'stopped 0');
});

test('switchboard up: a second signal of either kind ends the drain at once', async (t) => {
  for (const [first, second] of [
    ['SIGINT', 'SIGTERM'],
    ['SIGTERM', 'SIGINT'],
  ] as const) {
    const sb = await spawnSwitchboard(t, {
      servers: { f: faulty() },
      shutdown: { drainMs: 600_000 },
      admin: { enabled: false },
    });
    const { client } = await connectHttp(t, sb.url);
    // A call under way, so the first signal's drain has something to wait for.
    const progress = new Inbox<number>();
    const hang = client.callTool(
      { name: 'slow', arguments: { steps: 100_000, everyMs: 50 } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    hang.catch(() => {});
    await progress.next();
    process.kill(sb.pid, first);
    await until(
      () => (sb.logLines().some((l) => /stopping/.test(String(l.msg))) ? true : undefined),
      'the drain',
    );
    process.kill(sb.pid, second);
    await eventually(`${first} then ${second} to end it`, () => !running(sb.pid), 30_000);
  }
});
