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
  const refusals = new NodeRefusals({
    probe: async (node) => {
      probed.push(node);
      return answers.shift() ?? { accepted: true };
    },
    probeMs: 20,
    log: log.logger,
    accepts: (node) => accepting.push(node),
  });
  assert.deepEqual(refusals.usable(['b', 'c']), ['b', 'c']);
  refusals.refused('c', 'node a is not trusted here');
  refusals.refused('c', 'again');
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
