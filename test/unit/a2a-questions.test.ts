// An agent's answer to a question and a backend's question, read whatever shape either takes: an
// action that is not text, a schema with holes, a message that is not a string. What cannot be
// read as an answer is taken as content (which the asker then refuses), never thrown.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dataPart, messageOf, textPart } from '../../src/a2a/parts.js';
import { answerOf, questionParts } from '../../src/a2a/questions.js';

const UNPRINTABLE = JSON.parse('{"toString":1}') as unknown;

test('an answer is read without throwing, whatever its action or the schema asked', () => {
  const odd = messageOf('user', [dataPart({ action: UNPRINTABLE, content: { a: 1 } })]);
  assert.deepEqual(answerOf(odd, {}), {
    action: 'accept',
    content: { action: UNPRINTABLE, content: { a: 1 } },
  });
  const declined = messageOf('user', [dataPart({ action: 'decline' })]);
  assert.deepEqual(answerOf(declined, {}), { action: 'decline' });
  // A backend's schema with a hole where a property should be: the text is still an answer.
  const text = messageOf('user', [textPart('blue')]);
  assert.deepEqual(answerOf(text, { requestedSchema: { properties: { colour: { type: 'string' } } } }), {
    action: 'accept',
    content: { colour: 'blue' },
  });
  assert.deepEqual(answerOf(text, { requestedSchema: { properties: { colour: null } } }), {
    action: 'accept',
    content: {},
  });
  assert.deepEqual(answerOf(text, { requestedSchema: { properties: 7 } }), { action: 'accept', content: {} });
});

test('an answer nested past the message depth limit is taken as declined, none of it passed on', () => {
  let deep: unknown = 'bottom';
  for (let i = 0; i < 600; i++) deep = { d: deep };
  const answer = messageOf('user', [dataPart({ action: 'accept', content: { value: deep } })]);
  assert.deepEqual(answerOf(answer, {}), { action: 'decline' });
  // Far deeper than a recursive walk could follow: still read, not thrown.
  for (let i = 0; i < 20_000; i++) deep = [deep];
  assert.deepEqual(answerOf(messageOf('user', [dataPart({ content: deep })]), {}), { action: 'decline' });
  // At the limit's side of it, an answer is an answer.
  let shallow: unknown = 1;
  for (let i = 0; i < 400; i++) shallow = { d: shallow };
  assert.equal(
    answerOf(messageOf('user', [dataPart({ action: 'accept', content: shallow })]), {}).action,
    'accept',
  );
});

test("a backend's question whose message is not text is asked with a default message", () => {
  const parts = questionParts({ message: UNPRINTABLE, requestedSchema: { type: 'object' } });
  assert.equal((parts[0]!.content as { value: string }).value, 'Input is required');
});
