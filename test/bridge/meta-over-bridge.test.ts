// A backend runs a code-mode script over the bridge: the calls the script makes are the
// backend's own, and they carry its chain, so a script that calls back into the backend that ran
// it is a cycle, refused as any bridge call closing one would be.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHops, type HopSwitchboard, type Json } from './hop-switchboard.js';

const GRANTS = ['*_call', '*_events', 'run_script'];

let hops: HopSwitchboard;
before(async () => {
  hops = await startHops({ a: GRANTS, b: GRANTS }, () => ({ catalog: { codeMode: { enabled: true } } }));
});
after(() => hops.stop());

/** Has backend a make `tool` with `args` over the bridge, and answers what it got back. */
async function fromA(tool: string, args: Json): Promise<Json> {
  const answer = await hops.call('a_call', { method: 'tools/call', params: { name: tool, arguments: args } });
  assert.equal(answer.error, undefined, JSON.stringify(answer.error));
  return answer.result as Json;
}

test("a backend's script calls another backend's tool over the bridge", async () => {
  const result = await fromA('run_script', { script: "return await callTool('b_events', {})" });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.equal((result.structuredContent as { toolCalls: number }).toolCalls, 1);
});

test("a backend's script calling back into that backend is a cycle", async () => {
  const result = await fromA('run_script', { script: "return await callTool('a_events', {})" });
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.match(JSON.stringify(result), /Call cycle: a -> a/);
});
