// What a reload changes, computed from two configurations alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Config, type ConfigInput } from '../../src/config/schema.js';
import { planReload } from '../../src/gateway/reload-plan.js';

const cfg = (input: ConfigInput) => Config.parse(input);
const cmd = (...args: string[]) => ({ command: 'node', args });

test('backends are added, removed, changed or left alone by their entries', () => {
  const plan = planReload(
    cfg({ servers: { same: cmd('a'), gone: cmd('b'), edited: cmd('c'), off: cmd('d') } }),
    cfg({
      servers: {
        same: cmd('a'),
        edited: { ...cmd('c'), env: { X: '1' } },
        off: { ...cmd('d'), disabled: true },
        fresh: cmd('e'),
      },
    }),
  );
  assert.deepEqual(plan.added, ['fresh']);
  assert.deepEqual(plan.removed.sort(), ['gone', 'off']);
  assert.deepEqual(plan.changed, ['edited']);
  assert.deepEqual(plan.needRestart, []);
});

test('the order keys were written in is no change', () => {
  const plan = planReload(
    cfg({ servers: { s: { command: 'node', env: { A: '1', B: '2' } } } }),
    cfg({ servers: { s: { env: { B: '2', A: '1' }, command: 'node' } } }),
  );
  assert.deepEqual([plan.added, plan.removed, plan.changed], [[], [], []]);
});

test('settings fixed at start keep their running value and are named; the rest is applied', () => {
  const running = cfg({ servers: {}, http: { port: 7450 }, limits: { maxCallsPerSession: 8 } });
  const plan = planReload(
    running,
    cfg({
      servers: {},
      http: { port: 9000 },
      bridge: { maxDepth: 3 },
      limits: { maxCallsPerSession: 2, maxMessageBytes: 2048 },
      shutdown: { drainMs: 5 },
    }),
  );
  assert.deepEqual(plan.needRestart.sort(), ['bridge.maxDepth', 'http.port', 'limits.maxMessageBytes']);
  assert.equal(plan.config.http.port, 7450);
  assert.equal(plan.config.bridge.maxDepth, running.bridge.maxDepth);
  assert.equal(plan.config.limits.maxMessageBytes, running.limits.maxMessageBytes);
  assert.equal(plan.config.limits.maxCallsPerSession, 2);
  assert.equal(plan.config.shutdown.drainMs, 5);
});

test('workflows named like members every object has are kept as running, not replaced by them', () => {
  const wf = { steps: [{ id: 'a', tool: 'x__y' }] };
  const plan = planReload(
    cfg({ servers: {}, workflows: { build: wf } }),
    cfg({ servers: {}, workflows: { build: wf, constructor: wf, toString: wf } }),
  );
  assert.deepEqual(plan.needRestart.sort(), ['workflows.constructor', 'workflows.toString']);
  // Not in the running configuration: left out of it until a restart, as any new workflow is.
  assert.deepEqual(Object.keys(plan.config.workflows), ['build']);
  assert.ok(!Object.hasOwn(plan.config.workflows, 'constructor'));
});
