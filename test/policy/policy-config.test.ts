// Policy configuration: the policy file joins the inline rules, problems in either name the file,
// the path and what was expected, and `switchboard policy test` explains a decision from the config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import { runPolicy } from '../../src/cli/policy.js';
import { captureIo } from '../trust/helpers.js';

async function files(t: TestContext, entries: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-policy-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(entries)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

const SERVERS = `servers:
  notes: { command: node, args: [notes.js] }
  search: { command: node, args: [search.js], bridge: { allow: [notes_read_*] } }
`;

test("a policy file's rules come after the inline ones, named after the file unless they have names", async (t) => {
  const dir = await files(t, {
    'sb.yaml': `${SERVERS}policy:\n  file: rules/extra.yaml\n  rules:\n    - { name: first, tools: [a], effect: deny }\n`,
    'rules/extra.yaml':
      'rules:\n  - { tools: [b], effect: allow }\n  - { name: named, tools: [c], effect: approve }\n',
  });
  const { config } = await loadConfig(join(dir, 'sb.yaml'));
  assert.deepEqual(
    config.policy.rules.map((r) => [r.name, r.effect]),
    [
      ['first', 'deny'],
      ['extra.yaml:rule[0]', 'allow'],
      ['named', 'approve'],
    ],
  );
  assert.equal(config.policy.file, undefined);
  assert.ok(Object.isFrozen(config.policy.rules));
});

test('problems in a policy file name that file, the path in it and the line', async (t) => {
  const dir = await files(t, {
    'sb.yaml': `${SERVERS}policy: { file: p.yaml, rules: [{ name: dup, effect: deny }] }\n`,
    'p.yaml':
      'rules:\n  - effect: allow\n    tools: [x]\n  - effect: perhaps\n    tools: x\n  - { name: dup, effect: deny }\n',
  });
  const err = await loadConfig(join(dir, 'sb.yaml')).catch((e: Error) => e);
  assert.ok(err instanceof Error);
  const lines = err.message.split('\n');
  const file = join(dir, 'p.yaml');
  assert.ok(
    lines.includes(
      `${file}: rules[1].effect: expected one of "allow", "deny", "approve", got a string ("perhaps") (line 4)`,
    ),
    err.message,
  );
  assert.ok(
    lines.includes(`${file}: rules[1].tools: expected an array of strings, got a string ("x") (line 5)`),
    err.message,
  );
  const missing = await files(t, { 'sb.yaml': `${SERVERS}policy: { file: nowhere.yaml }\n` });
  const notFound = await loadConfig(join(missing, 'sb.yaml')).catch((e: Error) => e);
  assert.match(
    String((notFound as Error).message),
    /sb\.yaml: policy\.file: expected a policy file, but .*nowhere\.yaml does not exist/,
  );
});

test('a name used twice across the config and its policy file is refused, naming both places', async (t) => {
  const dir = await files(t, {
    'sb.yaml': `${SERVERS}policy: { file: p.yaml, rules: [{ name: dup, effect: deny }] }\n`,
    'p.yaml': 'rules:\n  - { name: dup, effect: allow }\n',
  });
  const err = await loadConfig(join(dir, 'sb.yaml')).catch((e: Error) => e);
  assert.equal(
    (err as Error).message,
    `${join(dir, 'p.yaml')}: rules[0].name: a name no other rule has ("dup" is also policy.rules[0] of the config)`,
  );
});

test('inline rules are checked: caller patterns, regular expressions, duplicate names, handlers with backends', async (t) => {
  const dir = await files(t, {
    'sb.yaml': `${SERVERS}policy:
  rules:
    - { callers: ['search'], effect: deny }
    - { tools: [x], when: { path: { matches: '([' } }, effect: deny }
    - { name: same, effect: deny }
    - { name: same, effect: allow }
    - { handlers: [vault.*], backends: [notes], effect: allow }
`,
  });
  const err = await loadConfig(join(dir, 'sb.yaml')).catch((e: Error) => e);
  const file = join(dir, 'sb.yaml');
  const text = (err as Error).message;
  assert.match(text, new RegExp(`${file}: policy\\.rules\\[0\\]\\.callers\\[0\\]: .*"<kind>:<id>"`));
  assert.match(
    text,
    new RegExp(
      `${file}: policy\\.rules\\[1\\]\\.when\\.path\\.matches: not a linear-time \\(RE2\\) regular expression: missing closing \\]`,
    ),
  );
  assert.match(
    text,
    new RegExp(
      `${file}: policy\\.rules\\[3\\]\\.name: a name no other rule has \\("same" is also rules\\[2\\]\\)`,
    ),
  );
  assert.match(text, new RegExp(`${file}: policy\\.rules\\[4\\]: handlers have no owning server`));
});

test('`policy test` prints the decision, the rule that made it, and why each earlier rule did not match', async (t) => {
  const dir = await files(t, {
    'sb.yaml': `${SERVERS}policy:
  rules:
    - { name: hosts-approve, callers: ['host:*'], backends: [notes], tools: ['write_*'], effect: approve }
    - { name: no-etc, tools: ['write_*'], when: { path: { pathPrefix: /etc } }, effect: deny }
    - { name: search-writes-tmp, callers: ['backend:search'], tools: [write_note], when: { path: { prefix: /tmp/ } }, effect: allow }
`,
  });
  const config = join(dir, 'sb.yaml');
  const ask = async (...argv: string[]) => {
    const io = captureIo();
    const code = await runPolicy(['test', '--config', config, ...argv], io.io);
    return { code, out: io.out, err: io.err.join('\n') };
  };
  const etc = await ask(
    '--caller',
    'backend:search',
    '--tool',
    'notes_write_note',
    '--args',
    '{"path":"/tmp/../etc/x"}',
  );
  assert.equal(etc.code, 0);
  assert.deepEqual(etc.out, [
    'backend:search -> tool write_note of server notes (tools/call)',
    '  1. hosts-approve: no match: caller backend:search is not in callers [host:*]',
    'decision: deny (rule no-etc)',
  ]);
  const tmp = await ask(
    '--caller',
    'backend:search',
    '--tool',
    'notes_write_note',
    '--args',
    '{"path":"/tmp/n"}',
  );
  assert.deepEqual(tmp.out.slice(1), [
    '  1. hosts-approve: no match: caller backend:search is not in callers [host:*]',
    '  2. no-etc: no match: when: path ("/tmp/n") is not inside /etc',
    'decision: allow (rule search-writes-tmp)',
  ]);
  const read = await ask('--caller', 'backend:search', '--tool', 'notes_read_x', '--expect', 'allow');
  assert.equal(read.code, 0);
  assert.equal(read.out.at(-1), 'decision: allow (rule servers.search.bridge.allow)');
  const listed = await ask('--caller', 'backend:search', '--tool', 'notes_write_note', '--list');
  // Judged as listed: no call's arguments are matched, so no rule is said not to match them.
  assert.deepEqual(listed.out, [
    'backend:search -> tool write_note of server notes (as listed, not called)',
    '  no-etc: has conditions (when): each call is judged on its own arguments',
    'decision: listed (decided at the call) (rule no-etc)',
  ]);
  // A backend's question to a host is judged as the return path judges it: only by rules naming it.
  const sample = await ask('--caller', 'backend:search', '--method', 'sampling/createMessage');
  assert.equal(
    sample.out[0],
    'backend:search -> ask sampling/createMessage of server search (sampling/createMessage)',
  );
  assert.match(
    sample.out.join('\n'),
    /no-etc: no match: a backend's sampling\/createMessage is judged only by rules that name it in methods/,
  );
  assert.equal(sample.out.at(-1), 'decision: allow (rule defaults.ask)');
  const wrong = await ask('--caller', 'host:stdio', '--method', 'vault.sign', '--expect', 'allow');
  assert.equal(wrong.code, 1);
  // The vault is for backends only: refused to a host before any rule is tried.
  assert.match(wrong.err, /expected allow, got deny \(rule handlers\.backendOnly\)/);
  const broken = await ask(
    '--caller',
    'backend:search',
    '--tool',
    'notes_write_note',
    '--args',
    '{"path":7}',
  );
  assert.match(
    broken.out.join('\n'),
    /no-etc: cannot evaluate: pathPrefix on path, which is a number, not a string/,
  );
  assert.equal(broken.out.at(-1), 'decision: deny (rule no-etc)');
});

test('a rule naming a server the config does not have is reported as a warning, wherever it is written', async (t) => {
  const dir = await files(t, {
    'sb.yaml': `${SERVERS}policy:
  file: p.yaml
  rules:
    - { name: typo, backends: [note], tools: ['write_*'], effect: deny }
    - { name: fine, backends: ['no*', notes], callers: ['backend:search'], effect: allow }
`,
    'p.yaml': "rules:\n  - { callers: ['backend:serch'], effect: deny }\n",
  });
  const { warnings } = await loadConfig(join(dir, 'sb.yaml'));
  assert.deepEqual(
    warnings.map((w) => [w.file, w.path, w.message]),
    [
      [
        join(dir, 'sb.yaml'),
        'policy.rules[0].backends[0]',
        'names no server in servers ("note"): the rule cannot match it',
      ],
      [
        join(dir, 'p.yaml'),
        'rules[0].callers[0]',
        'names no server in servers ("backend:serch"): the rule cannot match it',
      ],
    ],
  );
});

test('built-in servers are known to rules and taken by no configured server; with the mesh on, other nodes may have the server', async (t) => {
  const dir = await files(t, {
    'sb.yaml': `${SERVERS}policy:
  rules:
    - { backends: [workflows], callers: ['host:*'], effect: allow }
    - { backends: [elsewhere], effect: deny }
    - { backends: [switchboard], tools: [run_script], effect: deny }
`,
    'mesh.yaml': `${SERVERS}mesh: { enabled: true, servers: ['nats://127.0.0.1:4222'], node: a }
policy:
  rules:
    - { backends: [elsewhere], effect: deny }
`,
    'taken.yaml': 'servers:\n  workflows: { command: node, args: [w.js] }\n',
    'context.yaml':
      'servers:\n  context: { command: node, args: [c.js] }\ncontext:\n  resources: { scopes: [team] }\n',
    'context-off.yaml': 'servers:\n  context: { command: node, args: [c.js] }\n',
  });
  const { warnings } = await loadConfig(join(dir, 'sb.yaml'));
  assert.deepEqual(
    warnings.map((w) => w.path),
    ['policy.rules[1].backends[0]'],
  );
  assert.deepEqual((await loadConfig(join(dir, 'mesh.yaml'))).warnings, []);
  // `context` is taken only while hosts may read the context store as resources.
  await assert.rejects(
    loadConfig(join(dir, 'context.yaml')),
    /servers\.context: "context" is the name of a server/,
  );
  await loadConfig(join(dir, 'context-off.yaml'));
  await assert.rejects(loadConfig(join(dir, 'taken.yaml')), (err: Error) => {
    assert.match(
      err.message,
      /servers\.workflows: "workflows" is the name of a server switchboard itself answers for/,
    );
    return true;
  });
});
