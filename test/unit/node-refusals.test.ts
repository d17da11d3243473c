// Nodes refusing this node: out of rotation unless every node refuses, probed until one is
// accepted (and said so), forgotten when they go down, and logged once per refusal, not per call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NodeRefusals, nodeRefusal, type ProbeResult } from '../../src/mesh/node-refusals.js';
import { NODE_REFUSED } from '../../src/mesh/subjects.js';
import { captureLog } from '../support/log-capture.js';
import { eventually } from '../support/poll.js';

test('a refusing node leaves rotation until a probe is accepted, and is logged once', async () => {
  const log = captureLog('info');
  const answers: ProbeResult[] = [{ accepted: false, why: 'still not trusted' }, { accepted: true }];
  const probed: string[] = [];
  const accepting: string[] = [];
  const refusing: string[] = [];
  const refusals = new NodeRefusals({
    probe: async (node) => {
      probed.push(node);
      return answers.shift() ?? { accepted: true };
    },
    probeMs: 20,
    log: log.logger,
    accepts: (node) => accepting.push(node),
    refuses: (node) => refusing.push(node),
  });
  assert.deepEqual(refusals.usable(['b', 'c']), ['b', 'c']);
  refusals.refused('c', 'node a is not trusted here');
  refusals.refused('c', 'again');
  // Told once, as it begins refusing (a server b serves too may start there now).
  assert.deepEqual(refusing, ['c']);
  assert.deepEqual(refusals.usable(['b', 'c']), ['b']);
  // Every node refusing: all of them, so a call fails in their words rather than as unreachable.
  assert.deepEqual(refusals.usable(['c']), ['c']);
  await eventually('probed twice and accepted', () => !refusals.refuses('c'));
  assert.deepEqual(probed, ['c', 'c']);
  // Told once, when it is back (what it alone serves may start now), not at the refused probe.
  assert.deepEqual(accepting, ['c']);
  assert.deepEqual(refusals.usable(['b', 'c']), ['b', 'c']);
  const msgs = log.lines().map((l) => l.msg as string);
  assert.equal(msgs.filter((m) => m.startsWith('mesh node refuses')).length, 1);
  assert.equal(msgs.filter((m) => m.startsWith('mesh node accepts')).length, 1);
  refusals.stop();
});

test('a node gone down is forgotten, and a stopped set probes no more', async () => {
  let probes = 0;
  const refusals = new NodeRefusals({
    probe: async () => {
      probes++;
      return { accepted: false, why: 'no' };
    },
    probeMs: 10,
    log: captureLog('info').logger,
  });
  refusals.refused('c', 'no');
  refusals.forget('c');
  assert.equal(refusals.refuses('c'), false);
  refusals.refused('d', 'no');
  refusals.stop();
  refusals.refused('e', 'no');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(probes, 0);
  assert.deepEqual(refusals.usable(['c', 'd', 'e']), ['c', 'd', 'e']);
});

test('only a refusal with the node reason counts as one', () => {
  const error = (data?: object) => ({
    jsonrpc: '2.0' as const,
    id: 1,
    error: { code: -32040, message: 'refused', ...(data && { data }) },
  });
  assert.equal(nodeRefusal(error({ reason: NODE_REFUSED })), 'refused');
  assert.equal(nodeRefusal(error({ reason: 'mesh_session_stale' })), undefined);
  assert.equal(nodeRefusal(error()), undefined);
  assert.equal(nodeRefusal({ jsonrpc: '2.0', id: 1, result: {} }), undefined);
});

test('a probe that answers after its node was forgotten and refused anew changes nothing', async () => {
  const log = captureLog('info');
  const pending: ((r: ProbeResult) => void)[] = [];
  const refusals = new NodeRefusals({
    probe: () => new Promise((resolve) => pending.push(resolve)),
    probeMs: 10,
    log: log.logger,
  });
  refusals.refused('c', 'an old key');
  await eventually('the first probe is out', () => pending.length === 1);
  // c went down and came back refusing: a new refusal, probed on its own.
  refusals.forget('c');
  refusals.refused('c', 'still an old key');
  pending[0]!({ accepted: true });
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(refusals.refuses('c'), 'the answer to the old probe does not end the new refusal');
  assert.ok(!log.lines().some((l) => String(l.msg).startsWith('mesh node accepts')));
  refusals.stop();
});
