// Attack: a grant wider than it reads. `bridge.allow: ['*']`, written to reach every tool, also
// reaches `vault.get` and every other backend-only handler; so does a rule naming no target, a
// `handlers: [vault.*]` pattern, or `defaults.backend: allow`. `switchboard validate` must name the
// rule and the handlers so the operator sees it; a grant that names the handler is not warned about.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runValidate } from '../../src/cli/validate.js';

async function validate(text: string): Promise<{ code: number; lines: string[]; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-grants-'));
  try {
    const file = join(dir, 'switchboard.yaml');
    await writeFile(file, text);
    const lines: string[] = [];
    const code = await runValidate({ config: file, env: {}, write: (l) => lines.push(l) });
    return { code, lines, file };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const VAULT =
  'vault.sign, vault.verify, vault.encrypt, vault.decrypt, vault.publicKey, vault.get, vault.keys, vault.list';

test("validate warns that bridge.allow: ['*'] grants a backend the vault, naming the grant and the handlers", async () => {
  const { code, lines, file } = await validate(
    ['servers:', "  search: { command: node, bridge: { allow: ['*'] } }"].join('\n'),
  );
  assert.equal(code, 0);
  assert.ok(
    lines.includes(
      `warning: ${file}: servers.search.bridge.allow: servers.search.bridge.allow grants backend search the handlers ${VAULT} without naming them; name each handler a backend needs`,
    ),
    lines.join('\n'),
  );
});

test('validate warns about rules broad enough to reach vault.get, and not about grants that name it', async () => {
  const { lines, file } = await validate(
    [
      'servers:',
      "  search: { command: node, bridge: { allow: ['search_*', vault.get] } }",
      '  notes: { command: node }',
      'policy:',
      '  rules:',
      "    - { name: search-everything, callers: ['backend:search'], effect: allow }",
      "    - { name: vault-family, callers: ['backend:*'], handlers: ['vault.*'], effect: approve }",
      "    - { name: exact, callers: ['backend:notes'], handlers: [vault.sign], effect: allow }",
      "    - { name: hosts-only, callers: ['host:*'], effect: allow }",
      '    - { name: owned, backends: [notes], effect: allow }',
      '    - { name: nothing, effect: deny }',
    ].join('\n'),
  );
  const warnings = lines.filter((l) => l.startsWith('warning:'));
  assert.deepEqual(warnings, [
    `warning: ${file}: policy.rules[0]: rule "search-everything" (allow) grants backend:search the handlers ${VAULT} without naming them; name each handler a backend needs`,
    `warning: ${file}: policy.rules[1]: rule "vault-family" (approve) grants backend:search, backend:notes the handlers ${VAULT} without naming them; name each handler a backend needs`,
  ]);
});

test('validate warns when backends are allowed by default, since the default reaches the vault', async () => {
  const { lines, file } = await validate(
    ['servers:', '  search: { command: node }', 'policy:', '  defaults: { backend: allow }'].join('\n'),
  );
  assert.ok(
    lines.includes(
      `warning: ${file}: policy.defaults.backend: policy.defaults.backend: allow grants every backend no rule decides for the handlers ${VAULT} without naming them; name each handler a backend needs`,
    ),
    lines.join('\n'),
  );
});
