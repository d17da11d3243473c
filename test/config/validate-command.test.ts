// `switchboard validate`: exit code, the issues and the backend summary it writes, and its extension hook.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { liveCheck } from '../../src/cli/live-check.js';
import { runValidate } from '../../src/cli/validate.js';
import { probeSandbox } from '../../src/sandbox/sandbox-probe.js';

async function withFile(name: string, text: string, fn: (file: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-validate-'));
  try {
    const file = join(dir, name);
    await writeFile(file, text);
    await fn(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const VALID = [
  'servers:',
  '  memory: { command: npx, args: [-y, "@modelcontextprotocol/server-memory"] }',
  '  github: { url: "https://user:pass@api.example.com/mcp?token=${TOKEN}" }',
  '  old: { type: sse, url: "https://old.example.com/sse", disabled: true }',
].join('\n');

test('a valid file exits 0 and lists each backend with its kind and command or url, hiding credentials', async () => {
  await withFile('switchboard.yaml', VALID, async (file) => {
    const lines: string[] = [];
    const code = await runValidate({ config: file, env: { TOKEN: 'secret' }, write: (l) => lines.push(l) });
    assert.equal(code, 0);
    assert.deepEqual(lines.slice(0, -1), [
      `${file}: valid; switchboard format, 3 backends`,
      '  memory  stdio  npx -y @modelcontextprotocol/server-memory',
      '  github  http   https://api.example.com/mcp?…',
      '  old     sse    https://old.example.com/sse  (disabled)',
    ]);
    // Then what stdio backends would run in on this machine (test/security/sandbox-downgrade.test.ts).
    assert.match(lines.at(-1)!, /^sandbox: /);
  });
});

test('an invalid file exits 1 and writes each issue with file and path', async () => {
  await withFile('switchboard.yaml', 'servers:\n  memory: { command: npx, args: -y }\n', async (file) => {
    const lines: string[] = [];
    const code = await runValidate({ config: file, env: {}, write: (l) => lines.push(l) });
    assert.equal(code, 1);
    assert.deepEqual(lines, [
      `${file}: servers.memory.args: expected an array of strings, got a string ("-y") (line 2)`,
      `${file}: not valid (1 problem)`,
    ]);
  });
});

test('a missing file exits 1 naming the file', async () => {
  const lines: string[] = [];
  const code = await runValidate({ config: '/nonexistent/switchboard.yaml', write: (l) => lines.push(l) });
  assert.equal(code, 1);
  assert.equal(lines[0], '/nonexistent/switchboard.yaml: file not found');
});

test('warnings are written but do not fail validation', async () => {
  const text = JSON.stringify({
    mcpServers: { fs: { command: 'npx', autoApprove: [] } },
    globalShortcut: 'x',
  });
  await withFile('claude_desktop_config.json', text, async (file) => {
    const lines: string[] = [];
    const code = await runValidate({ config: file, env: {}, write: (l) => lines.push(l) });
    assert.equal(code, 0);
    assert.ok(
      lines.some((l) => l.startsWith('warning: ') && l.includes('globalShortcut')),
      lines.join('\n'),
    );
    assert.ok(lines.includes(`${file}: valid; mcpServers format, 1 backend`), lines.join('\n'));
  });
});

test('extra checks run on the loaded config; their issues, or their failure, make it exit 1', async () => {
  await withFile('switchboard.yaml', VALID, async (file) => {
    const lines: string[] = [];
    const seen: string[] = [];
    const code = await runValidate({
      config: file,
      env: { TOKEN: 't' },
      write: (l) => lines.push(l),
      checks: [
        (loaded) => {
          seen.push(...Object.keys(loaded.config.servers));
          return [{ file, path: 'servers.memory', message: "tool 'store' collides with servers.github" }];
        },
        async () => {
          throw new Error('backend github did not start');
        },
      ],
    });
    assert.equal(code, 1);
    assert.deepEqual(seen, ['memory', 'github', 'old']);
    assert.ok(
      lines.includes(`${file}: servers.memory: tool 'store' collides with servers.github`),
      lines.join('\n'),
    );
    assert.ok(lines.includes(`${file}: check failed: backend github did not start`), lines.join('\n'));
    assert.ok(
      lines.includes(`${file}: not valid (2 problems); switchboard format, 3 backends`),
      lines.join('\n'),
    );
  });
});

test('a sandboxed backend naming a script under /tmp it will not see is warned of, with the fix', async (t) => {
  const probe = await probeSandbox('bwrap');
  if (!probe.available) return t.skip(`no sandbox here (${probe.reason}): nothing is hidden`);
  const script = `/tmp/sb-validate-elsewhere-${process.pid}/server.mjs`;
  const text = [
    'servers:',
    `  hidden: { command: node, args: [${script}] }`,
    `  open: { command: node, args: [${script}], sandbox: none }`,
    `  bound: { command: node, args: [${script}], sandbox: { read: [${dirname(script)}] } }`,
  ].join('\n');
  await withFile('switchboard.yaml', text, async (file) => {
    const lines: string[] = [];
    const code = await runValidate({ config: file, env: {}, write: (l) => lines.push(l) });
    assert.equal(code, 0, 'a warning, not a problem');
    const warnings = lines.filter((l) => l.startsWith('warning: '));
    assert.deepEqual(warnings, [
      `warning: ${file}: servers.hidden: names ${script}, under /tmp: the sandbox gives the server a /tmp of its own, without it: add its directory to servers.hidden.sandbox.read, with what it loads from there (its package's node_modules: the checkout's root) (write if the server writes there), or move it out of /tmp`,
    ]);
  });
});

test('the live check names a workflow step whose tool no server lists, with its path', async (t) => {
  const notes = fileURLToPath(new URL('../../examples/servers/notes.js', import.meta.url));
  const server = JSON.stringify({ command: process.execPath, args: [notes], sandbox: 'none' });
  const text = [
    `servers: { notes: ${server} }`,
    'namespacing: { mode: always }',
    'workflows:',
    '  good: { steps: [{ id: a, tool: notes_list_notes }, { id: b, tool: workflows_other, needs: [a] }] }',
    '  other: { steps: [{ id: c, tool: notes_list_notes }] }',
    '  typo: { steps: [{ id: d, tool: list_notes }] }',
  ].join('\n');
  const state = await mkdtemp(join(tmpdir(), 'switchboard-validate-state-'));
  t.after(() => rm(state, { recursive: true, force: true }));
  await withFile('switchboard.yaml', text, async (file) => {
    const lines: string[] = [];
    const code = await runValidate({
      config: file,
      env: { XDG_STATE_HOME: state },
      checks: [(loaded) => liveCheck(loaded, () => {})],
      write: (l) => lines.push(l),
    });
    assert.equal(code, 1);
    const problems = lines.filter((l) => l.includes('no server lists'));
    assert.deepEqual(problems, [
      `${file}: workflows.typo.steps[0].tool: no server lists a tool "list_notes"; did you mean "notes_list_notes"?`,
    ]);
  });
});
