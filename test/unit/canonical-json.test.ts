// Canonical JSON's bytes are stored (pins, approval bindings, audit argument hashes, vault MACs):
// they must not change from one release to the next. These are the bytes it has always given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CanonicalJsonError,
  MAX_CANONICAL_DEPTH,
  canonicalJson,
  canonicalLengthBound,
  canonicalProblem,
} from '../../src/encoding/canonical-json.js';

test('keys sorted at every depth; array-index keys first, in numeric order, as always', () => {
  const cases: [unknown, string][] = [
    [{ b: 1, a: [3, { d: 4, c: 5 }] }, '{"a":[3,{"c":5,"d":4}],"b":1}'],
    [{ b: 1, '10': 2, '2': 3, a: 4 }, '{"2":3,"10":2,"a":4,"b":1}'],
    [
      { '01': 1, '-1': 2, '1.5': 3, '4294967295': 4, '4294967294': 5 },
      '{"4294967294":5,"-1":2,"01":1,"1.5":3,"4294967295":4}',
    ],
    [{ B: 1, a: 2, é: 3, '𝄞': 4, '\uffff': 5 }, '{"B":1,"a":2,"é":3,"𝄞":4,"\uffff":5}'],
    [{ u: undefined, f: () => 1, n: null }, '{"n":null}'],
    [[undefined, () => 1, NaN, -0, 1e21], '[null,null,null,0,1e+21]'],
    [undefined, 'null'],
    [new Date(0), '{}'],
    ['\u2028"\\', '"\u2028\\"\\\\"'],
  ];
  for (const [value, text] of cases) assert.equal(canonicalJson(value), text);
  // More keys than the in-place sort handles: the built-in sort, same order.
  const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${(i * 7) % 40}`, i]));
  const keys = Object.keys(JSON.parse(canonicalJson(many)) as object);
  assert.deepEqual(keys, [...keys].sort());
});

test('what has no canonical form is refused with the reason', () => {
  assert.throws(
    () => canonicalJson({ n: 1n }),
    (e: CanonicalJsonError) => e.reason === 'unencodable',
  );
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  assert.throws(
    () => canonicalJson(cycle),
    (e: CanonicalJsonError) => e.reason === 'too_deep',
  );
});

/** A value nested `levels` deep in alternating objects and arrays, holding `inner`. */
function nested(levels: number, inner: unknown = 1): unknown {
  let v = inner;
  for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v };
  return v;
}

test('the check before a call refuses exactly what encoding refuses, for the same reason', () => {
  const throwing = {
    get secret(): unknown {
      throw new Error('no');
    },
  };
  const cycle: unknown[] = [];
  cycle.push(cycle);
  const values = [
    nested(MAX_CANONICAL_DEPTH - 1),
    nested(MAX_CANONICAL_DEPTH),
    nested(MAX_CANONICAL_DEPTH + 1),
    nested(MAX_CANONICAL_DEPTH - 1, {}),
    nested(MAX_CANONICAL_DEPTH - 1, []),
    nested(3, 1n),
    { a: [1, 'x', null, { b: 2n }] },
    { f: () => 1, s: Symbol('s'), u: undefined, d: new Date(0) },
    throwing,
    cycle,
    1n,
    'text',
    null,
  ];
  for (const [i, value] of values.entries()) {
    let reason: string | undefined;
    try {
      canonicalJson(value);
    } catch (err) {
      reason = (err as CanonicalJsonError).reason;
    }
    assert.equal(canonicalProblem(value)?.reason, reason, `value ${i}`);
  }
});

test('the length worked out before a call is never shorter than the text (what V8 can write decides)', () => {
  const values = [
    { b: 1, a: [3, { d: 4, c: 5 }] },
    ['\u0000\u001f"\\', '\ud800', 'é𝄞', ''],
    [-1.7976931348623157e308, 2.2250738585072014e-308, -0, NaN, 1e21, 123456789],
    { u: undefined, f: () => 1, s: Symbol('s'), n: null, t: true, x: false },
    [undefined, () => 1],
    { '\u0001key': 'v', ['k'.repeat(50)]: ['\n'.repeat(50)] },
    nested(40, 'deep'),
    new Date(0),
  ];
  for (const [i, value] of values.entries())
    assert.ok(canonicalLengthBound(value) >= canonicalJson(value).length, `value ${i}`);
});
