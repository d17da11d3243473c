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

test("a backend's question whose message is not text is asked with a default message", () => {
  const parts = questionParts({ message: UNPRINTABLE, requestedSchema: { type: 'object' } });
  assert.equal((parts[0]!.content as { value: string }).value, 'Input is required');
});

test('an approval prompt (one boolean) takes yes or no in words; other text answers nothing', () => {
  const approval = {
    requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' } }, required: ['approve'] },
  };
  const said = (text: string) => answerOf(messageOf('user', [textPart(text)]), approval);
  for (const yes of ['yes', 'Yes.', 'approve', 'true'])
    assert.deepEqual(said(yes), { action: 'accept', content: { approve: true } }, yes);
  for (const no of ['no', 'deny', 'false', 'reject'])
    assert.deepEqual(said(no), { action: 'accept', content: { approve: false } }, no);
  for (const neither of ['yes, but only if it is cheap', 'OK', 'accept'])
    assert.deepEqual(said(neither), { action: 'accept', content: {} }, neither);
});
