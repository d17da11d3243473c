// The mesh's shared run ledger against a real nats-server with JetStream: a cancel that lands
// between a run's record and its lease still stops the run, reading another node's run leaves
// nothing behind on the node that read it, and holding a run means the lease names this process
// (whatever revision this process last heard).
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { MeshSection } from '../../src/config/mesh-schema.js';
import { KvRunLedger } from '../../src/mesh/state/kv-run-ledger.js';
import { MeshState } from '../../src/mesh/state/mesh-state.js';
import type { RunRow } from '../../src/workflows/run-store.js';
import { captureLog } from '../support/log-capture.js';
import { NO_NATS, startNats, type Nats } from '../support/nats.js';
import { until } from '../support/poll.js';

describe('the shared run ledger', { skip: NO_NATS, timeout: 60_000 }, () => {
  let nats: Nats;
  before(async () => {
    nats = await startNats({ jetStream: mkdtempSync(join(tmpdir(), 'sb-js-ledger-')) });
  });
  after(async () => {
    await nats.stop();
  });

  /** Each test's connections, closed when it ends. */
  let states: MeshState[] = [];
  afterEach(async () => {
    await Promise.all(states.map((s) => s.close()));
    states = [];
  });
  const stateOf = (node: string, name: string) => {
    const state = new MeshState(
      MeshSection.parse({ enabled: true, servers: [nats.url], node, name, state: 'jetstream' }),
      captureLog('warn').logger,
    );
    states.push(state);
    return state;
  };
  const runRow = (id: string): RunRow => ({
    id,
    workflow: 'w',
    caller: 'host:t',
    parentRun: null,
    status: 'running',
    input: {},
    result: null,
    error: null,
    ownerPid: process.pid,
    cancelRequested: false,
    startedAt: Date.now(),
    endedAt: null,
  });

  it('a cancel heard before this node held the run is acted on once it does', async (t) => {
    const a = new KvRunLedger(stateOf('a', 'l1'));
    const b = new KvRunLedger(stateOf('b', 'l1'));
    t.after(() => {
      a.close();
      b.close();
    });
    const cancelled: string[] = [];
    a.start(
      () => {},
      () => {},
      (run) => cancelled.push(run),
    );
    b.start(
      () => {},
      () => {},
    );
    // The record is written (as created() writes it first) and b asks for the cancel before a
    // holds the lease: a hears it while the run is nobody's.
    const kv = await stateOf('a', 'l1').bucket('runs');
    await kv.put('r.run1', JSON.stringify(runRow('run1')));
    assert.equal(await b.requestCancel('run1'), true);
    await until(() => (a as unknown as { cancels: Set<string> }).cancels.has('run1'), 'a to hear the cancel');
    assert.deepEqual(cancelled, [], 'nobody holds run1 yet');
    await a.created(runRow('run1'));
    assert.deepEqual(cancelled, ['run1']);
  });

  it('reading a run this node does not hold keeps none of its step revisions', async (t) => {
    const a = new KvRunLedger(stateOf('a', 'l2'));
    const b = new KvRunLedger(stateOf('b', 'l2'));
    t.after(() => {
      a.close();
      b.close();
    });
    await a.created(runRow('run2'));
    await a.stepStarted('run2', 'first', 1);
    await a.stepEnded('run2', 'first', 'done', { ok: true });
    const read = await b.read('run2');
    assert.equal(read?.steps.length, 1);
    assert.equal((b as unknown as { stepRevisions: Map<string, number> }).stepRevisions.size, 0);
  });

  it("this process's own renewal, read before its answer is in, is no takeover; the run ends with its lease gone", async (t) => {
    const a = new KvRunLedger(stateOf('a', 'l4'));
    t.after(() => a.close());
    await a.created(runRow('run4'));
    // The renewal as it lands on the server: the lease moves on, still naming a, while a has not
    // yet heard the new revision.
    const kv = await stateOf('a', 'l4').bucket('runs');
    const holder = (a as unknown as { holder: string }).holder;
    const lease = await kv.get('l.run4');
    await kv.update('l.run4', holder, lease!.revision);
    await a.stepStarted('run4', 'first', 1);
    await a.stepEnded('run4', 'first', 'done', { ok: true });
    await a.ended('run4', 'succeeded', { ok: true });
    assert.notEqual((await kv.get('l.run4'))?.operation, 'PUT', 'the ended run holds no lease');
    assert.equal((await a.read('run4'))?.row.status, 'succeeded');
  });

  it('a run whose lease names another holder is not started here, is let go, and is not ended here', async (t) => {
    const a = new KvRunLedger(stateOf('a', 'l5'));
    t.after(() => a.close());
    const lost: string[] = [];
    // No follower yet (it opens in start's background): only the step's own read can tell.
    (a as unknown as { lost: (run: string) => void }).lost = (run) => lost.push(run);
    await a.created(runRow('run5'));
    const kv = await stateOf('b', 'l5').bucket('runs');
    const lease = await kv.get('l.run5');
    await kv.update('l.run5', 'b/another-process', lease!.revision);
    await assert.rejects(a.stepStarted('run5', 'first', 1), /run run5 was taken over by another node/);
    assert.deepEqual(lost, ['run5']);
    await a.ended('run5', 'failed', undefined, 'taken over');
    assert.equal((await a.read('run5'))?.row.status, 'running', "the record is the new holder's");
    assert.equal((await kv.get('l.run5'))?.string(), 'b/another-process');
  });

  it('renewals that overlap, or whose answer is lost, keep the run', async (t) => {
    const a = new KvRunLedger(stateOf('a', 'l6'));
    t.after(() => a.close());
    const lost: string[] = [];
    (a as unknown as { lost: (run: string) => void }).lost = (run) => lost.push(run);
    const renew = () => (a as unknown as { renew(): Promise<void> }).renew();
    await a.created(runRow('run6'));
    await Promise.all([renew(), renew()]);
    // A renewal that landed but whose answer never came: the lease moved on, still naming a.
    const kv = await stateOf('a', 'l6').bucket('runs');
    const holder = (a as unknown as { holder: string }).holder;
    await kv.update('l.run6', holder, (await kv.get('l.run6'))!.revision);
    await renew();
    await renew();
    assert.deepEqual(lost, []);
    await a.stepStarted('run6', 'first', 1);
    assert.equal((await kv.get('l.run6'))?.string(), holder);
  });

  it('prunes runs that ended before the cut, steps and all, and leaves runs under way', async (t) => {
    const a = new KvRunLedger(stateOf('a', 'l3'));
    t.after(() => a.close());
    await a.created(runRow('done'));
    await a.stepStarted('done', 'first', 1);
    await a.stepEnded('done', 'first', 'done', { ok: true });
    await a.ended('done', 'succeeded', { ok: true });
    await a.created(runRow('busy'));
    assert.equal(await a.prune(Date.now() - 60_000), 0, 'nothing ended that long ago');
    assert.equal(await a.prune(Date.now() + 1), 1);
    assert.equal(await a.read('done'), undefined);
    const kv = await stateOf('a', 'l3').bucket('runs');
    const left: string[] = [];
    for await (const key of await kv.keys('s.done.>')) left.push(key);
    assert.deepEqual(left, []);
    assert.equal((await a.read('busy'))?.row.status, 'running');
  });
});
