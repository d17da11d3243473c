// workflowFiles: workflows in files of their own, joined to the inline ones, each file's problems
// named against that file (path inside it, line), names unique across all of them.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig } from '../../src/config/load.js';

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-wf-files-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const MAIN = `servers:
  fx: { command: node, args: [x.js] }
workflowFiles: [workflows/*.yaml, extra.json]
workflows:
  inline:
    steps: [{ id: a, tool: fx_add, args: { a: '1', b: '2' } }]
`;

test('workflows from a glob and a named file join the inline ones; a file may run another file’s', async () => {
  const dir = tree({
    'switchboard.yaml': MAIN,
    'workflows/one.yaml': `workflows:
  one:
    taskSupport: required
    steps: [{ id: a, workflow: two }]
`,
    'workflows/two.yaml': `workflows:
  two:
    steps: [{ id: a, tool: fx_add, args: { a: '1', b: '2' } }]
`,
    'workflows/notes.txt': 'not a workflow file',
    'extra.json': JSON.stringify({ workflows: { three: { steps: [{ id: 'a', handler: 'vault.sign' }] } } }),
  });
  const loaded = await loadConfig(join(dir, 'switchboard.yaml'));
  assert.deepEqual(Object.keys(loaded.config.workflows).sort(), ['inline', 'one', 'three', 'two']);
  assert.equal(loaded.config.workflows.one!.taskSupport, 'required');
  assert.equal(loaded.config.workflows.two!.taskSupport, 'optional');
  // Every file read is one backends must not see, and one a running switchboard watches.
  assert.deepEqual(
    loaded.files.map((f) => f.slice(dir.length + 1)),
    ['switchboard.yaml', 'workflows/one.yaml', 'workflows/two.yaml', 'extra.json'],
  );
});

test("a workflow file's problems name that file, the path inside it and the line", async () => {
  const dir = tree({
    'switchboard.yaml': MAIN,
    'workflows/bad.yaml': `workflows:
  bad:
    steps:
      - id: a
        tool: fx_add
        args: { a: 'input.(' }
      - { id: b, needs: [nope], tool: fx_add }
  inline:
    steps: [{ id: a, tool: fx_add }]
`,
    'extra.json': '{"workflows": {}}',
  });
  const err = await loadConfig(join(dir, 'switchboard.yaml')).then(
    () => assert.fail('expected a ConfigError'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ConfigError);
  const bad = join(dir, 'workflows/bad.yaml');
  const byPath = new Map(err.issues.map((i) => [i.path, i]));
  const cel = byPath.get('workflows.bad.steps[0].args.a');
  assert.equal(cel?.file, bad);
  assert.equal(cel?.line, 6);
  assert.match(cel!.message, /a CEL expression/);
  assert.equal(byPath.get('workflows.bad.steps[1].needs[0]')?.file, bad);
  const dup = byPath.get('workflows.inline');
  assert.equal(dup?.file, bad);
  assert.match(dup!.message, /also declared in .*switchboard\.yaml/);
});

test('a named workflow file that is missing, and a cycle across files, are config errors', async () => {
  const missing = tree({ 'switchboard.yaml': MAIN, 'workflows/a.yaml': 'workflows: {}\n' });
  await assert.rejects(loadConfig(join(missing, 'switchboard.yaml')), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.equal(e.issues[0]!.path, 'workflowFiles');
    assert.match(e.issues[0]!.message, /extra\.json does not exist/);
    return true;
  });
  const cyclic = tree({
    'switchboard.yaml': MAIN,
    'workflows/a.yaml': 'workflows:\n  a: { steps: [{ id: x, workflow: b }] }\n',
    'extra.json': JSON.stringify({ workflows: { b: { steps: [{ id: 'y', workflow: 'a' }] } } }),
  });
  await assert.rejects(
    loadConfig(join(cyclic, 'switchboard.yaml')),
    /run each other in a cycle \(a -> b -> a\)/,
  );
});
