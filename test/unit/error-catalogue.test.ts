// The error catalogue on its own: one meaning per (code, reason), the caller's own refusals apart
// from backend failures, nothing unexposed leaking through toWire, and the HTTP status of each.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  LOCAL_ERRORS,
  PROTOCOL_ERRORS,
  httpStatusOf,
  type CatalogueEntry,
  type LocalCode,
  type LocalEntry,
} from '../../src/errors/catalogue.js';
import {
  BackendWireError,
  LocalError,
  WIRE,
  WireError,
  backendFailure,
  toWire,
} from '../../src/errors/errors.js';

const locals = Object.entries(LOCAL_ERRORS) as [LocalCode, LocalEntry][];
const protocol: [string, CatalogueEntry][] = Object.entries(PROTOCOL_ERRORS);

test('every catalogue entry has a distinct (code, reason)', () => {
  const keys = [
    ...protocol.map(([, e]) => `${e.code}`),
    ...locals.map(([reason, e]) => `${e.code}/${reason}`),
  ];
  const seen = new Set<string>();
  for (const key of keys) {
    assert.ok(!seen.has(key), `${key} appears twice`);
    seen.add(key);
  }
});

test("WIRE keeps its names and values, and the caller's own refusals have codes of their own", () => {
  assert.deepEqual(
    { ...WIRE },
    {
      PARSE_ERROR: -32700,
      INVALID_REQUEST: -32600,
      METHOD_NOT_FOUND: -32601,
      INVALID_PARAMS: -32602,
      INTERNAL_ERROR: -32603,
      BACKEND_UNAVAILABLE: -32001,
      REQUEST_TIMEOUT: -32001,
      SESSION_NOT_FOUND: -32001,
      RESOURCE_NOT_FOUND: -32002,
      REQUEST_CANCELLED: -32800,
      HEADER_MISMATCH: -32020,
      MISSING_CLIENT_CAPABILITY: -32021,
      UNSUPPORTED_PROTOCOL_VERSION: -32022,
      AUTH_FAILED: -32030,
      CALL_CYCLE: -32031,
      CALL_TOO_DEEP: -32032,
      CALL_CHAIN_UNKNOWN: -32033,
      POLICY_REFUSED: -32040,
      RATE_LIMITED: -32050,
      QUEUE_FULL: -32051,
      DRAINING: -32052,
      TOO_MANY_SESSIONS: -32053,
    },
  );
  for (const reason of ['rate_limited', 'queue_full', 'draining'] as const) {
    const code = LOCAL_ERRORS[reason].code;
    const sharing = [
      ...protocol.filter(([, e]) => e.code === code).map(([name]) => name),
      ...locals.filter(([r, e]) => e.code === code && r !== reason).map(([r]) => r),
    ];
    assert.deepEqual(sharing, [], `${reason} (${code}) shares its code`);
  }
});

test('every local code maps to a protocol code or one in the implementation-defined range', () => {
  const protocolCodes = new Set(protocol.map(([, e]) => e.code));
  for (const [reason, e] of locals) {
    assert.ok(protocolCodes.has(e.code) || (e.code <= -32000 && e.code >= -32099), `${reason}: ${e.code}`);
  }
});

test('toWire never leaks an unexposed message, and carries data.reason for every local code', () => {
  for (const [reason, e] of locals) {
    const err = new LocalError(reason, 'details with s3cr3t', { data: { backend: 'b', extra: 's3cr3t' } });
    const body = toWire(err);
    assert.equal(body.code, e.code, reason);
    if (e.expose) {
      assert.equal(body.message, 'details with s3cr3t', reason);
      assert.deepEqual(body.data, { reason, backend: 'b', extra: 's3cr3t' }, reason);
    } else {
      assert.deepEqual(body, { code: e.code, message: 'Internal error', data: { reason } }, reason);
    }
  }
  assert.deepEqual(toWire(new Error('s3cr3t')), { code: -32603, message: 'Internal error' });
  assert.deepEqual(toWire(new WireError(WIRE.CALL_CYCLE, 'Call cycle: a -> a', { path: ['a', 'a'] })), {
    code: -32031,
    message: 'Call cycle: a -> a',
    data: { path: ['a', 'a'] },
  });
});

test('the HTTP status of each entry is read from the catalogue, by reason before code', () => {
  for (const [reason, e] of locals) {
    assert.equal(httpStatusOf(toWire(new LocalError(reason, 'x'))), e.http, reason);
  }
  for (const [name, e] of protocol) {
    assert.equal(httpStatusOf({ code: e.code, message: 'x' }), e.http, name);
  }
  // A reason that does not belong to the code is not trusted: the code decides.
  assert.equal(httpStatusOf({ code: -32601, message: 'x', data: { reason: 'rate_limited' } }), 404);
  assert.equal(httpStatusOf({ code: -32050, message: 'a backend of its own' }), undefined);
});

test("a backend's -32700 or -32600 becomes -32603 naming it; its other answers pass untouched", () => {
  for (const code of [WIRE.PARSE_ERROR, WIRE.INVALID_REQUEST]) {
    const answer = { code, message: 'bad', data: { x: 1 } };
    assert.deepEqual(toWire(backendFailure('b', new BackendWireError(answer))), {
      code: -32603,
      message: 'Backend b could not take the call it was forwarded: bad',
      data: { reason: 'backend_protocol_error', backend: 'b', error: answer },
    });
  }
  const own = new BackendWireError({ code: -32602, message: 'no' });
  assert.equal(backendFailure('b', own), own);
  // Switchboard's own -32600 (not the backend's answer) is not touched either.
  const local = new WireError(WIRE.INVALID_REQUEST, 'mine');
  assert.equal(backendFailure('b', local), local);
});

test('a local error gets the backend it failed on, and keeps the data it had', () => {
  const named = backendFailure('b', new LocalError('timeout', 'late', { data: { limitMs: 5 } }));
  assert.deepEqual(toWire(named).data, { reason: 'timeout', backend: 'b', limitMs: 5 });
  const already = backendFailure(
    'outer',
    new LocalError('backend_closed', 'gone', { data: { backend: 'inner' } }),
  );
  assert.deepEqual(toWire(already).data, { reason: 'backend_closed', backend: 'inner' });
});
