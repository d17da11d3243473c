// Bridge tokens: one identity per server, a token of its own for each replica, and ending one
// replica's start ends only that replica's token.
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

test("a replica's new start replaces that replica's token only", () => {
  const tokens = new BridgeTokens();
  const old = tokens.mint('search', 1);
  const sibling = tokens.mint('search', 0);
  const renewed = tokens.mint('search', 1);
  assert.equal(tokens.identify(old), undefined);
  assert.equal(tokens.identify(renewed), 'search');
  assert.equal(tokens.identify(sibling), 'search');
  tokens.revoke('search');
  assert.equal(tokens.identify(renewed), undefined, 'revoking the identity ends every token of it');
  assert.equal(tokens.identify(sibling), undefined);
});
