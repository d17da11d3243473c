// The modern era's HTTP headers: value encoding, the header/body cross-check, and the rules for
// x-mcp-header annotations.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodeHeaderValue,
  encodeHeaderValue,
  invalidHeaderAnnotation,
  paramHeaders,
  routingMismatch,
} from '../../src/protocol/http-headers.js';
import type { JsonRpcRequest } from '../../src/jsonrpc/message.js';

test('header values: plain ASCII as is, anything else in the base64 sentinel form, both ways', () => {
  for (const [value, encoded] of [
    ['us-west1', 'us-west1'],
    ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    [' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
  ]) {
    assert.equal(encodeHeaderValue(value!), encoded);
    assert.equal(decodeHeaderValue(encoded!), value);
  }
  assert.equal(decodeHeaderValue('=?base64?not base64!?='), undefined);
  assert.equal(decodeHeaderValue('=?base64?SGVsbG8?='), undefined, 'unpadded');
});

const schema = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    limits: { type: 'object', properties: { max: { type: 'integer', 'x-mcp-header': 'Max' } } },
  },
};

function call(args: Record<string, unknown>): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'sql',
      arguments: args,
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' },
    },
  };
}

test('Mcp-Param headers are written from the arguments and checked against them', () => {
  const args = { region: 'eu', limits: { max: 42 } };
  const headers = paramHeaders(schema, args);
  assert.deepEqual(headers, { 'mcp-param-region': 'eu', 'mcp-param-max': '42' });
  const base = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'sql' };
  assert.equal(routingMismatch({ ...base, ...headers }, call(args), schema), undefined);
  assert.equal(
    routingMismatch({ ...base, ...headers, 'mcp-param-max': '42.0' }, call(args), schema),
    undefined,
  );
  assert.match(routingMismatch({ ...base, 'mcp-param-max': '42' }, call(args), schema)!, /Mcp-Param-Region/);
  assert.match(
    routingMismatch({ ...base, ...headers, 'mcp-param-region': 'us' }, call(args), schema)!,
    /'us'/,
  );
  // An argument that is absent needs no header.
  assert.equal(routingMismatch(base, call({}), schema), undefined);
});

test('x-mcp-header annotations that break the rules are named', () => {
  assert.equal(invalidHeaderAnnotation(schema), undefined);
  const bad = (props: Record<string, unknown>) =>
    invalidHeaderAnnotation({ type: 'object', properties: props });
  assert.match(bad({ n: { type: 'number', 'x-mcp-header': 'N' } })!, /string, integer or boolean/);
  assert.match(bad({ n: { type: 'string', 'x-mcp-header': '' } })!, /token/);
  assert.match(bad({ n: { type: 'string', 'x-mcp-header': 'a b' } })!, /token/);
  assert.match(
    bad({ a: { type: 'string', 'x-mcp-header': 'Dup' }, b: { type: 'string', 'x-mcp-header': 'dup' } })!,
    /twice/,
  );
  assert.match(
    bad({ list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } })!,
    /reached/,
  );
  assert.match(
    invalidHeaderAnnotation({
      type: 'object',
      oneOf: [{ properties: { a: { type: 'string', 'x-mcp-header': 'A' } } }],
    })!,
    /reached/,
  );
});
