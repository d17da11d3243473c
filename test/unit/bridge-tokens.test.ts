// Bridge tokens: one identity per server, tokens of its own for each replica (one per start), and
// ending one start ends only that start's token.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BridgeTokens } from '../../src/bridge/tokens.js';

test('each replica of a server has a token of its own, all identifying the server', () => {
  const tokens = new BridgeTokens();
  const first = tokens.mint('search', 0);
  const second = tokens.mint('search', 1);
  assert.notEqual(first, second);
  assert.equal(tokens.identify(first), 'search');
  assert.equal(tokens.identify(second), 'search');

  assert.equal(tokens.revoke('search', first), true);
  assert.equal(tokens.identify(first), undefined, "the ended start's token stops working");
  assert.equal(tokens.identify(second), 'search', "the sibling's does not");
  assert.equal(tokens.revoke('search', first), false, 'a late second end changes nothing');
});

test("a replica's new start adds a token beside its old one, which works until that start ends", () => {
  const tokens = new BridgeTokens();
  const old = tokens.mint('search', 1);
  const sibling = tokens.mint('search', 0);
  // A reload starts a replacement beside the running process: both must be able to call.
  const renewed = tokens.mint('search', 1);
  assert.equal(tokens.identify(old), 'search');
  assert.equal(tokens.identify(renewed), 'search');
  assert.equal(tokens.revoke('search', old), true);
  assert.equal(tokens.identify(old), undefined);
  assert.equal(tokens.identify(renewed), 'search');
  // Starts whose end was never reported cannot pile up: only the last few of a replica work.
  const many = [1, 2, 3, 4].map(() => tokens.mint('search', 1));
  assert.equal(tokens.identify(renewed), undefined);
  assert.equal(tokens.identify(many[3]!), 'search');
  assert.equal(tokens.identify(sibling), 'search', "a sibling's token is never displaced");
  tokens.revoke('search');
  assert.equal(tokens.identify(many[3]!), undefined, 'revoking the identity ends every token of it');
  assert.equal(tokens.identify(sibling), undefined);
});
