// What a legacy caller is given of a modern backend's result: the modern-only fields go, the rest stays.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { legacyResult } from '../../src/eras/legacy-result.js';

const INFO = 'io.modelcontextprotocol/serverInfo';

test('takes off resultType complete, the cache hints and the server-info _meta key', () => {
  const result = {
    content: [{ type: 'text', text: 'hi' }],
    resultType: 'complete',
    ttlMs: 0,
    cacheScope: 'private',
    _meta: { [INFO]: { name: 'm', version: '1' } },
  };
  assert.deepEqual(legacyResult(result), { content: [{ type: 'text', text: 'hi' }] });
});

test('keeps unknown fields and other _meta keys', () => {
  const result = { 'x-extra': 1, resultType: 'complete', _meta: { [INFO]: { name: 'm' }, 'x-key': true } };
  assert.deepEqual(legacyResult(result), { 'x-extra': 1, _meta: { 'x-key': true } });
});

test('a result of another type (a task, whose ttlMs is its own) is given as it is', () => {
  const result = { resultType: 'task', taskId: 't', ttlMs: 60_000, _meta: { [INFO]: { name: 'm' } } };
  assert.equal(legacyResult(result), result);
});

test('a result with nothing modern in it is given as it is', () => {
  const result = { contents: [], _meta: { 'x-key': 1 } };
  assert.equal(legacyResult(result), result);
});
