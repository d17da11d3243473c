// Outbound refusal of non-public addresses for HTTP backends: which addresses, and the exemptions
// (a literal address or localhost in the URL, allowPrivateNetwork) that let an operator say so.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nonPublicReason } from '../../src/net/outbound.js';
import { serveExpiring } from '../fixtures/expiring-http-server.js';
import { fakeResolver, toolsThrough } from './helpers.js';

test('non-public addresses are named by kind; public ones pass', () => {
  const expected: Record<string, string | undefined> = {
    '127.0.0.1': 'loopback',
    '127.8.9.10': 'loopback',
    '10.1.2.3': 'private (RFC 1918)',
    '172.16.0.1': 'private (RFC 1918)',
    '172.31.255.255': 'private (RFC 1918)',
    '192.168.1.1': 'private (RFC 1918)',
    '100.64.0.1': 'shared carrier-grade NAT (RFC 6598)',
    '169.254.169.254': 'link-local (where cloud metadata services live)',
    '0.0.0.0': 'unspecified',
    '224.0.0.1': 'multicast',
    '::1': 'loopback',
    '::': 'unspecified',
    'fd00:ec2::254': 'unique local (private)',
    'fc12::1': 'unique local (private)',
    'fe80::1%eth0': 'link-local',
    '::ffff:127.0.0.1': 'loopback',
    '::ffff:a9fe:a9fe': 'link-local (where cloud metadata services live)',
    '64:ff9b::10.0.0.1': 'private (RFC 1918)',
    // IPv6 that reaches an IPv4 address some other way is judged by that address, or refused.
    '::7f00:1': 'IPv4-compatible (deprecated)',
    '::8.8.8.8': 'IPv4-compatible (deprecated)',
    '::ffff:0:7f00:1': 'loopback',
    '::ffff:0:8.8.8.8': undefined,
    '64:ff9b:1::a00:1': 'local-use NAT64 (RFC 8215)',
    '2002:7f00:1::': 'loopback',
    '2002:a9fe:a9fe::1': 'link-local (where cloud metadata services live)',
    '2002:808:808::1': undefined,
    '100::1': 'discard-only (RFC 6666)',
    '8.8.8.8': undefined,
    '172.32.0.1': undefined,
    '100.128.0.1': undefined,
    '2606:4700::1111': undefined,
    '::ffff:8.8.8.8': undefined,
  };
  for (const [address, reason] of Object.entries(expected))
    assert.equal(nonPublicReason(address), reason, address);
});

test('a URL naming the address itself (127.0.0.1 or localhost) is the operator saying so: it connects', async (t) => {
  const backend = await serveExpiring();
  t.after(() => backend.close());
  assert.deepEqual(await toolsThrough(t, { url: backend.url }), ['whoami']);
  const port = new URL(backend.url).port;
  assert.deepEqual(await toolsThrough(t, { url: `http://localhost:${port}/mcp` }), ['whoami']);
});

test('allowPrivateNetwork lets a name that resolves to a private address connect', async (t) => {
  const backend = await serveExpiring();
  t.after(() => backend.close());
  const port = new URL(backend.url).port;
  const lookup = fakeResolver({ 'mcp.internal.test': ['127.0.0.1'] });
  const entry = { url: `http://mcp.internal.test:${port}/mcp`, allowPrivateNetwork: true };
  assert.deepEqual(await toolsThrough(t, entry, lookup), ['whoami']);
  assert.ok(lookup.asked.includes('mcp.internal.test'));
});
