// The method table is the one place stages learn what a method is: it must hold every method the
// specification's schemas define (both eras), and its entries must be whole for what they claim.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CancelTaskRequestSchema,
  ClientRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  ServerRequestSchema,
} from '@modelcontextprotocol/core';
import { METHODS, methodSpec, removedInModern, type MethodSpec } from '../../src/protocol/methods.js';

type Literal = { shape: { method: { value: string } } };
const methodsOf = (union: { options: readonly unknown[] }) =>
  union.options.map((o) => (o as Literal).shape.method.value);

test('every request a client may send, in either era, has an entry as a call', () => {
  const tasks = [
    GetTaskRequestSchema,
    GetTaskPayloadRequestSchema,
    CancelTaskRequestSchema,
    ListTasksRequestSchema,
  ];
  const methods = [
    ...methodsOf(ClientRequestSchema),
    ...tasks.map((s) => (s as unknown as Literal).shape.method.value),
  ];
  assert.ok(methods.length >= 19);
  for (const m of methods) assert.equal(methodSpec(m)?.direction, 'call', `${m} is missing or not a call`);
});

test('every request a server may send to its client (but ping, which switchboard answers) is an ask with a capability', () => {
  const asks = methodsOf(ServerRequestSchema).filter((m) => m !== 'ping');
  assert.ok(asks.length >= 3);
  for (const m of asks) {
    const spec = methodSpec(m);
    assert.equal(spec?.direction, 'ask', `${m} is missing or not an ask`);
    assert.ok(spec?.capability, `${m} names no capability`);
  }
});

test('entries are whole: targets say where they are named, lists whose list they are, removed methods are legacy only', () => {
  for (const [method, spec] of Object.entries(METHODS) as [string, MethodSpec][]) {
    if (spec.target) assert.ok(spec.names, `${method} has a target but names no field`);
    if (spec.target) assert.equal(spec.answeredBy, 'backend', method);
    if (spec.list) assert.equal(spec.answeredBy, 'catalog', method);
    if (spec.header) assert.ok(spec.names, `${method} mirrors a name it does not have`);
    if (spec.direction === 'ask') assert.ok(spec.capability, method);
  }
  for (const m of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe'])
    assert.ok(removedInModern(m), m);
  for (const m of ['tools/call', 'server/discover', 'subscriptions/listen', 'tasks/get', 'vault.sign'])
    assert.ok(!removedInModern(m), m);
  assert.equal(methodSpec('vault.sign'), undefined);
});
