// A backend waiting out its restart delay is tried at once when told what kept it down may be gone
// (Supervisor.now); told so while a restart is under way, it is tried again at once should that one
// fail, and so is one told so during its first start; never two restarts at once, and nothing
// after forget or stop.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Upstream } from '../../src/backends/upstream.js';
import { Supervisor } from '../../src/gateway/supervisor.js';
import { captureLog } from '../support/log-capture.js';
import { until } from '../support/poll.js';

/** A backend whose restart delay (30 to 60 s) outlasts any wait here. */
function backend(): Upstream {
  return {
    name: 'far',
    state: 'ready',
    config: { restart: { initialMs: 60_000, maxMs: 60_000, stableMs: 60_000 } },
    stop: async () => {},
  } as unknown as Upstream;
}

/** A supervisor whose restarts wait for the test to settle each (`settle(i, ok)`). */
function supervised() {
  const settles: ((ok: boolean) => void)[] = [];
  let running = 0;
  let most = 0;
  const log = captureLog('info');
  const sup = new Supervisor({
    log: log.logger,
    restart: () =>
      new Promise<void>((resolve, reject) => {
        most = Math.max(most, ++running);
        settles.push((ok) => {
          running--;
          if (ok) resolve();
          else reject(new Error('refused'));
        });
      }),
  });
  return {
    sup,
    log,
    attempts: () => settles.length,
    most: () => most,
    settle: (i: number, ok: boolean) => settles[i]!(ok),
  };
}

test('told during a restart that fails, the next restart is at once, not after the grown delay', async () => {
  const s = supervised();
  s.sup.down(backend(), 'refused by c');
  s.sup.now('far', 'mesh node b serves it now');
  assert.equal(s.attempts(), 1, 'the waiting backend is tried at once');
  s.sup.now('far', "mesh node c accepts this node's calls again");
  s.sup.now('far', 'and again');
  s.settle(0, false);
  await until(() => (s.attempts() === 2 ? true : undefined), 'the second restart');
  s.settle(1, true);
  await until(() => (s.log.lines().some((l) => l.msg === 'backend is back') ? true : undefined), 'back');
  // Up now: nothing to hurry.
  s.sup.now('far', 'late');
  assert.equal(s.attempts(), 2);
  assert.equal(s.most(), 1, 'never two restarts at once');
  const early = s.log.lines().filter((l) => l.msg === 'restarting backend now, before its delay is out');
  assert.deepEqual(
    early.map((l) => l.why),
    ['mesh node b serves it now'],
  );
  s.sup.stop();
});

test('told during its first start, a backend whose start then fails is restarted at once; one that came up is not hurried later', async () => {
  const s = supervised();
  const far = backend();
  s.sup.now('far', "mesh node c refuses this node's calls; another serves it", true);
  // The first start fails (it is not the supervisor's): the restart is at once, not in 60 s.
  s.sup.down(far, 'refused by c');
  assert.equal(s.attempts(), 0);
  await until(() => (s.attempts() === 1 ? true : undefined), 'the restart at once');
  assert.equal(s.log.lines().find((l) => l.msg === 'backend down; restarting it later')?.delayMs, 0);
  s.settle(0, true);
  await until(() => (s.log.lines().some((l) => l.msg === 'backend is back') ? true : undefined), 'back');
  // Told during a start that succeeded: its next fall waits its delay as usual.
  const t = supervised();
  t.sup.now('far', 'during a start that succeeds', true);
  t.sup.up(far);
  t.sup.down(far, 'fell');
  assert.notEqual(t.log.lines().find((l) => l.msg === 'backend down; restarting it later')?.delayMs, 0);
  s.sup.stop();
  t.sup.stop();
});

test('nothing is restarted after forget or stop', async () => {
  const s = supervised();
  s.sup.down(backend(), 'x');
  s.sup.forget('far');
  s.sup.now('far', 'after forget');
  const t = supervised();
  t.sup.down(backend(), 'y');
  t.sup.stop();
  t.sup.now('far', 'after stop');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(s.attempts() + t.attempts(), 0);
});
