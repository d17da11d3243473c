// The compiled policy on its own: rule order, selectors, conditions and their evaluation errors,
// bridge.allow as a rule, and the defaults.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Config, type ConfigInput } from '../../src/config/schema.js';
import { CompiledPolicy, PolicyError, type Subject } from '../../src/policy/policy.js';

const compile = (input: Partial<ConfigInput>) => new CompiledPolicy(Config.parse(input));
const host = { kind: 'host', id: 'http' } as const;
const tool = (name: string, backend = 'notes'): Subject => ({
  kind: 'tool',
  backend,
  name,
  exposed: `${backend}_${name}`,
  method: 'tools/call',
});
const ruleOf = (p: CompiledPolicy, s: Subject, args?: unknown) => {
  const v = p.decide(host, s, args);
  return `${v.effect} ${v.rule}`;
};

test('each operator holds, fails, or cannot judge as documented', () => {
  const when = (cond: object) =>
    compile({ policy: { rules: [{ name: 'c', tools: ['t'], when: { v: cond }, effect: 'deny' }] } });
  const cases: [object, unknown, 'deny' | 'allow' | 'error'][] = [
    [{ equals: { a: 1, b: [2] } }, { b: [2], a: 1 }, 'deny'],
    [{ equals: null }, null, 'deny'],
    [{ equals: 1 }, '1', 'allow'],
    [{ in: ['r', 'w'] }, 'w', 'deny'],
    [{ in: ['r', 'w'] }, 'x', 'allow'],
    [{ prefix: '/tmp/' }, '/tmp/a', 'deny'],
    [{ prefix: '/tmp/' }, 7, 'error'],
    [{ pathPrefix: '/etc' }, '/etc', 'deny'],
    [{ pathPrefix: '/etc' }, '/etcetera', 'allow'],
    [{ pathPrefix: '/etc/' }, '/var/../etc//passwd', 'deny'],
    [{ pathPrefix: '/etc' }, 'file:///etc/%70asswd', 'deny'],
    [{ pathPrefix: '/etc' }, 'etc/passwd', 'error'],
    [{ matches: '^[a-z]+$' }, 'abc', 'deny'],
    [{ matches: '^[a-z]+$' }, 'ab1', 'allow'],
    [{ matches: 'x' }, ['x'], 'error'],
    [{ exists: true }, 0, 'deny'],
    [{ exists: false }, undefined, 'deny'],
    [{ exists: false }, 'here', 'allow'],
    // Absent values satisfy no other operator.
    [{ prefix: '/' }, undefined, 'allow'],
  ];
  for (const [cond, value, want] of cases) {
    const p = when(cond);
    let got: string;
    try {
      got = p.decide(host, tool('t'), value === undefined ? {} : { v: value }).effect;
    } catch (err) {
      assert.ok(err instanceof PolicyError && err.rule === 'c', String(err));
      got = 'error';
    }
    assert.equal(got, want, `${JSON.stringify(cond)} on ${JSON.stringify(value)}`);
  }
  // Arguments that are not an object cannot be judged by a rule with conditions.
  assert.throws(() => when({ exists: true }).decide(host, tool('t'), ['v']), PolicyError);
});

test('the first matching rule decides; selectors narrow by caller, owner, kind, name and method', () => {
  const p = compile({
    servers: { notes: { command: 'x' }, search: { command: 'y', bridge: { allow: ['notes_read_*'] } } },
    policy: {
      rules: [
        { name: 'backends-only', callers: ['backend:*'], tools: ['write_*'], effect: 'deny' },
        { name: 'subscribe', methods: ['resources/subscribe'], effect: 'approve' },
        { name: 'notes-writes', backends: ['notes'], tools: ['write_*'], effect: 'approve' },
        { name: 'prompts', prompts: ['*'], effect: 'deny' },
      ],
    },
  });
  assert.equal(ruleOf(p, tool('write_note')), 'approve notes-writes');
  assert.equal(ruleOf(p, tool('write_note', 'other')), 'allow defaults.host');
  assert.equal(ruleOf(p, { ...tool('greet'), kind: 'prompt', method: 'prompts/get' }), 'deny prompts');
  const sub: Subject = {
    kind: 'resource',
    backend: 'notes',
    name: 'file:///a',
    exposed: 'x',
    method: 'resources/subscribe',
  };
  assert.equal(ruleOf(p, sub), 'approve subscribe');
  const search = { kind: 'backend', id: 'search' } as const;
  assert.equal(p.decide(search, tool('write_x'), {}).rule, 'backends-only');
  assert.equal(p.decide(search, tool('read_x'), {}).rule, 'servers.search.bridge.allow');
  assert.equal(p.decide(search, tool('list'), {}).rule, 'defaults.backend');
  assert.equal(p.decide({ kind: 'extension', id: 'vault' }, tool('x'), {}).effect, 'allow');
  const handler: Subject = {
    kind: 'handler',
    name: 'vault.sign',
    exposed: 'vault.sign',
    method: 'vault.sign',
  };
  assert.equal(ruleOf(p, handler), 'deny defaults.host');
});

test('listing leaves a conditional rule to the call, and a denial of a listed item is not "unknown"', () => {
  const p = compile({
    policy: {
      rules: [
        { name: 'cond', tools: ['a'], when: { x: { exists: true } }, effect: 'allow' },
        { name: 'rest', tools: ['a', 'b'], effect: 'deny' },
      ],
    },
  });
  assert.deepEqual(p.decideListing(host, tool('a')), { effect: 'call', rule: 'cond' });
  assert.equal(p.decideListing(host, tool('b')).effect, 'deny');
  assert.equal(p.visible(host, tool('a')), true);
  assert.equal(p.visible(host, tool('b')), false);
  assert.equal(ruleOf(p, tool('a'), {}), 'deny rest');
});
