// What the bridge tells the redactor: exactly the tokens that authenticate, after every change.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BridgeTokens } from '../../src/bridge/tokens.js';

test('the watcher always holds the tokens that work, and no other', () => {
  const tokens = new BridgeTokens();
  let seen: readonly string[] = ['not yet told'];
  tokens.watch((live) => (seen = live));
  assert.deepEqual(seen, []);
  const a = tokens.mint('a');
  const b = tokens.mint('b', 1);
  tokens.set('remote', 'configured-token-1');
  assert.deepEqual(new Set(seen), new Set([a, b, 'configured-token-1']));
  tokens.set('remote', 'configured-token-2');
  assert.deepEqual(new Set(seen), new Set([a, b, 'configured-token-2']));
  assert.equal(tokens.identify('configured-token-1'), undefined);
  tokens.revoke('a', a);
  assert.deepEqual(new Set(seen), new Set([b, 'configured-token-2']));
  // A replica restarted more often than its ends were reported: the dropped token is gone too.
  const starts = [tokens.mint('b', 1), tokens.mint('b', 1), tokens.mint('b', 1)];
  assert.equal(tokens.identify(b), undefined);
  assert.deepEqual(new Set(seen), new Set([...starts, 'configured-token-2']));
  tokens.revoke('b');
  assert.deepEqual(seen, ['configured-token-2']);
  for (const token of seen) assert.equal(tokens.identify(token), 'remote');
});
