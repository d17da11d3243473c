// Start-up over many stdio backends: their starts are spread over turns of the event loop, and the
// lists read in one turn go into the catalog together. Every backend still ends up listed, a host
// is answered while they start, and a stop before a backend's turn came leaves no process behind.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import { startSwitchboard, type Switchboard } from '../../src/switchboard.js';
import { connect, faulty, toolNames } from '../faults/helpers.js';
import { eventually } from '../support/poll.js';
import { configFor } from '../support/start-switchboard.js';

const COUNT = 30;

function servers(): Record<string, ReturnType<typeof faulty>> {
  return Object.fromEntries(Array.from({ length: COUNT }, (_, i) => [`s${i}`, faulty()]));
}

async function start(t: TestContext): Promise<Switchboard> {
  const sb = await startSwitchboard({
    config: configFor({ servers: servers(), namespacing: { mode: 'always' } }),
    http: true,
    awaitBackends: false,
  });
  t.after(() => sb.stop());
  return sb;
}

/** The pids whose parent is this process (the backends switchboard spawned, their sandboxes). */
function children(): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) === process.pid && state !== 'Z') out.push(Number(entry));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out;
}

test('thirty stdio backends started over turns of the event loop all end up listed', async (t) => {
  const sb = await start(t);
  // A host is answered while the backends start (with whatever is up by then).
  const client = await connect(t, sb);
  const early = await toolNames(client);
  assert.ok(early.every((n) => /^s\d+_/.test(n)));
  await sb.ready;
  assert.deepEqual(sb.failedBackends, []);
  const names = new Set(await toolNames(client));
  for (let i = 0; i < COUNT; i++) {
    for (const tool of ['echo', 'crash', 'hang'])
      assert.ok(names.has(`s${i}_${tool}`), `s${i}_${tool} is listed`);
  }
  // Every backend lists the same tools as the first, and nothing else is listed.
  const perBackend = [...names].filter((n) => n.startsWith('s0_')).length;
  assert.equal(names.size, COUNT * perBackend);
  // Every backend serves calls once listed.
  const r = await client.callTool({ name: `s${COUNT - 1}_echo`, arguments: { x: 1 } });
  assert.equal(r.isError, undefined);
});

test('a stop before some backends had their turn to start leaves no process behind', async (t) => {
  const before = new Set(children());
  const sb = await start(t);
  // At once: most backends are still waiting for their turn, and must not start after the stop.
  await sb.stop();
  // The start is over once every backend's turn has come: none begins after this.
  await sb.ready.catch(() => {});
  await eventually('every process switchboard spawned has ended', () =>
    children().every((pid) => before.has(pid)),
  );
});
