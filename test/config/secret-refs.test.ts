// ${secret:NAME} is a vault reference only where the config file itself writes it: text that comes
// from the environment, or the escape $${secret:NAME}, is the literal text `${secret:NAME}`
// wherever it lands, and never makes a secret leave the vault.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { isStdioBackend, type Config } from '../../src/config/schema.js';
import { withSecrets } from '../../src/vault/open.js';
import { Vault } from '../../src/vault/vault.js';

const SECRET = 'vault-secret-value-9f2c';

function vault(): Vault {
  const v = Vault.empty();
  v.addEntries([{ name: 'api', kind: 'secret', created: '', value: Buffer.from(SECRET) }], 'test');
  return v;
}

/** The configuration a backend is started with: the file parsed with `env`, secrets resolved. */
function started(lines: string[], env: NodeJS.ProcessEnv): Config {
  return withSecrets(parseConfig(lines.join('\n'), 'a.yaml', { env }).config, vault());
}

function headersOf(config: Config): Record<string, string> {
  const b = config.servers['r'];
  assert.ok(b && !isStdioBackend(b));
  return b.headers;
}

test('a header the file writes as ${secret:NAME} gets the secret', () => {
  const config = started(
    ['servers:', '  r: { url: "https://r.example/mcp", headers: { A: "Bearer ${secret:api}" } }'],
    {},
  );
  assert.deepEqual(headersOf(config), { A: `Bearer ${SECRET}` });
});

test('an environment variable whose value is ${secret:NAME} is that literal text in a header', () => {
  const config = started(
    [
      'servers:',
      '  r:',
      '    url: "https://r.example/mcp"',
      '    headers: { A: "${env:REF}", B: "x ${REF} y", C: "${REF:-none}" }',
    ],
    { REF: '${secret:api}' },
  );
  assert.deepEqual(headersOf(config), { A: '${secret:api}', B: 'x ${secret:api} y', C: '${secret:api}' });
});

test('$${secret:NAME} is the literal text ${secret:NAME}, beside a real reference', () => {
  const config = started(
    ['servers:', '  r: { url: "https://r.example/mcp", headers: { A: "$${secret:api} ${secret:api}" } }'],
    {},
  );
  assert.deepEqual(headersOf(config), { A: `\${secret:api} ${SECRET}` });
});

test('outside headers, literal ${secret:NAME} text from the environment or an escape is kept, not refused', () => {
  const config = started(
    ['servers:', '  s: { command: tool, args: ["${REF}", "$${secret:api}"], env: { V: "${REF}" } }'],
    { REF: '${secret:api}' },
  );
  const s = config.servers['s'];
  assert.ok(s && isStdioBackend(s));
  assert.deepEqual(s.args, ['${secret:api}', '${secret:api}']);
  assert.deepEqual(s.env, { V: '${secret:api}' });
});

test('the file writing ${secret:NAME} outside headers is still refused', () => {
  assert.throws(
    () => started(['servers:', '  s: { command: tool, args: ["${secret:api}"] }'], {}),
    /servers\.s\.args\[0\]: \$\{secret:…\} is resolved only in a remote server's headers/,
  );
});

test("a variable's value ending in $ right before the file's ${secret:NAME} is refused, not read as the escape", () => {
  assert.throws(
    () =>
      parseConfig(
        'servers:\n  r: { url: "https://r.example/mcp", headers: { A: "${P}${secret:api}" } }',
        'a.yaml',
        { env: { P: 'x$' } },
      ),
    /servers\.r\.headers\.A: has '\$' right before '\$\{secret:…\}'/,
  );
});
