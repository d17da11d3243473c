// How the served agent reads which skill a message calls: the metadata's skill first, so a
// skill's own data may hold a `skill` field; the call form in a data part otherwise.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Message } from '@a2a-js/sdk';
import { dataPart, messageOf } from '../../src/a2a/parts.js';
import { skillCallOf } from '../../src/a2a/skill-call.js';

function message(data: Record<string, unknown>[], metadata?: Record<string, unknown>): Message {
  return messageOf('user', data.map(dataPart), {}, metadata);
}

test('a data part holding a skill field of its own is the arguments of the skill the metadata names', () => {
  const args = { skill: 'typescript', level: 3 };
  assert.deepEqual(skillCallOf(message([args], { skill: 'hire' })), { skill: 'hire', arguments: args });
  // Named on the request rather than the message.
  assert.deepEqual(skillCallOf(message([args]), { skill: 'hire' }), { skill: 'hire', arguments: args });
});

test('the call form is still read, alone or with the same skill in the metadata', () => {
  const call = { skill: 'echo', arguments: { x: 1 } };
  assert.deepEqual(skillCallOf(message([call])), { skill: 'echo', arguments: { x: 1 } });
  assert.deepEqual(skillCallOf(message([call], { skill: 'echo' })), { skill: 'echo', arguments: { x: 1 } });
  assert.deepEqual(skillCallOf(message([{ y: 2 }], { skill: 'echo', arguments: { x: 1 } })), {
    skill: 'echo',
    arguments: { x: 1 },
  });
  assert.match((skillCallOf(message([{ x: 1 }])) as { problem: string }).problem, /names no skill/);
});
