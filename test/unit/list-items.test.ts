// What the catalog takes of a backend's page: a modern HTTP backend's tools with invalid
// x-mcp-header annotations are left out, however many, in one warning that names the first few.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Upstream } from '../../src/backends/upstream.js';
import { dropInvalidHeaders } from '../../src/gateway/list-items.js';
import { captureLog } from '../support/log-capture.js';

const backend = { name: 'mh' } as Upstream;
const good = (name: string) => ({
  name,
  inputSchema: { type: 'object', properties: { g: { type: 'string', 'x-mcp-header': 'G' } } },
});
// A number may not be mirrored into a header.
const bad = (name: string) => ({
  name,
  inputSchema: { type: 'object', properties: { n: { type: 'number', 'x-mcp-header': 'N' } } },
});

test('thousands of tools with invalid header annotations cost one warning; the rest keep their order', () => {
  const log = captureLog('info');
  const items = [good('first'), ...Array.from({ length: 3000 }, (_, i) => bad(`bad${i}`)), good('last')];
  dropInvalidHeaders(items, backend, log.logger);
  assert.deepEqual(
    items.map((item) => item.name),
    ['first', 'last'],
  );
  const lines = log.lines();
  assert.equal(lines.length, 1);
  assert.equal(lines[0]!.msg, '3000 tools left out: invalid x-mcp-header');
  assert.equal(lines[0]!.left, 3000);
  const named = lines[0]!.tools as { tool: string; reason: string }[];
  assert.deepEqual(
    named.map((t) => t.tool),
    Array.from({ length: 10 }, (_, i) => `bad${i}`),
  );
  assert.ok(named.every((t) => t.reason.length > 0));
});

test('a page with nothing to leave out is not touched and logs nothing', () => {
  const log = captureLog('info');
  const items = [good('a'), good('b')];
  dropInvalidHeaders(items, backend, log.logger);
  assert.equal(items.length, 2);
  assert.equal(log.lines().length, 0);
});
