// DNS-rebinding guard: loopback Host and Origin pass, others only when listed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkHostAndOrigin } from '../../src/front/http-guard.js';

const none = { allowedHosts: [], allowedOrigins: [] };

test('loopback hosts pass with any port, with or without a loopback origin', () => {
  for (const host of ['localhost:7450', '127.0.0.1:1', '[::1]:7450', 'localhost']) {
    assert.equal(checkHostAndOrigin(host, undefined, none), undefined, host);
    assert.equal(checkHostAndOrigin(host, 'http://localhost:3000', none), undefined, host);
  }
});

test('a rebinding name in Host is refused unless listed', () => {
  assert.match(checkHostAndOrigin('evil.example:7450', undefined, none)!, /Host evil\.example:7450/);
  assert.equal(
    checkHostAndOrigin('mcp.internal:7450', undefined, { ...none, allowedHosts: ['mcp.internal'] }),
    undefined,
  );
});

test('a foreign or malformed Origin is refused unless listed', () => {
  assert.match(checkHostAndOrigin('localhost:7450', 'https://evil.example', none)!, /Origin/);
  assert.match(checkHostAndOrigin('localhost:7450', 'null', none)!, /Origin/);
  assert.equal(
    checkHostAndOrigin('localhost:7450', 'https://app.example', {
      ...none,
      allowedOrigins: ['https://app.example'],
    }),
    undefined,
  );
});

test('a request without Host is refused', () => {
  assert.match(checkHostAndOrigin(undefined, undefined, none)!, /Missing Host/);
});
