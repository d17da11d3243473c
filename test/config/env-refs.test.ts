// ${VAR} references: resolved from the given environment, defaults and escapes honoured, a missing one is an error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/load.js';
import { isStdioBackend, type Config } from '../../src/config/schema.js';
import { issueAt, pick, rejects, REMOTE_FIELDS, STDIO_FIELDS } from './helpers.js';

const github = (token: string): string =>
  ['servers:', '  github:', '    command: github-mcp', '    env:', `      GITHUB_TOKEN: "${token}"`].join(
    '\n',
  );

function envOf(config: Config, name: string): Record<string, string> {
  const backend = config.servers[name];
  assert.ok(backend && isStdioBackend(backend));
  return backend.env;
}

test('resolves ${VAR} from the environment it is given, not from process.env', () => {
  const { config } = parseConfig(github('${GH_TOKEN}'), 'switchboard.yaml', { env: { GH_TOKEN: 'ghp_x' } });
  assert.deepEqual(envOf(config, 'github'), { GITHUB_TOKEN: 'ghp_x' });
});

test('a missing variable names the file, the path and the variable, and never becomes an empty string', () => {
  const err = rejects(github('${GH_TOKEN}'), 'switchboard.yaml', { env: {} });
  assert.equal(err.code, 'config_invalid');
  assert.equal(err.issues.length, 1);
  const issue = issueAt(err, 'servers.github.env.GITHUB_TOKEN');
  assert.equal(issue.file, 'switchboard.yaml');
  assert.equal(issue.line, 5);
  assert.equal(
    err.message,
    'switchboard.yaml: servers.github.env.GITHUB_TOKEN: references ${GH_TOKEN}, but GH_TOKEN is not set in the environment (set it, or write ${GH_TOKEN:-default}) (line 5)',
  );
});

test('a name every object answers to (constructor, hasOwnProperty) is a variable like any other', () => {
  const err = rejects(github('${constructor}'), 'switchboard.yaml', { env: {} });
  assert.match(err.message, /references \$\{constructor\}, but constructor is not set in the environment/);
  const { config } = parseConfig(github('${hasOwnProperty:-fallback}'), 'switchboard.yaml', { env: {} });
  assert.deepEqual(envOf(config, 'github'), { GITHUB_TOKEN: 'fallback' });
});

test('${VAR:-default} uses the default when the variable is unset or empty, and the variable when set', () => {
  const text = github('${GH_TOKEN:-none}');
  assert.deepEqual(envOf(parseConfig(text, 'a.yaml', { env: {} }).config, 'github'), {
    GITHUB_TOKEN: 'none',
  });
  assert.deepEqual(envOf(parseConfig(text, 'a.yaml', { env: { GH_TOKEN: '' } }).config, 'github'), {
    GITHUB_TOKEN: 'none',
  });
  assert.deepEqual(envOf(parseConfig(text, 'a.yaml', { env: { GH_TOKEN: 't' } }).config, 'github'), {
    GITHUB_TOKEN: 't',
  });
});

test('$${ is a literal ${ and is not resolved', () => {
  const { config } = parseConfig(github('$${GH_TOKEN} costs $$5, ${A}${B}'), 'a.yaml', {
    env: { A: 'x', B: 'y' },
  });
  assert.deepEqual(envOf(config, 'github'), { GITHUB_TOKEN: '${GH_TOKEN} costs $$5, xy' });
});

test('${env:VAR}, as VS Code and Cursor write it, is the same as ${VAR}', () => {
  const { config } = parseConfig(github('Bearer ${env:GH_TOKEN}'), 'a.yaml', { env: { GH_TOKEN: 't' } });
  assert.deepEqual(envOf(config, 'github'), { GITHUB_TOKEN: 'Bearer t' });
});

test('resolves references in every string value: args, url, headers, cwd', () => {
  const text = [
    'servers:',
    '  a: { command: "${BIN}", args: ["--dir", "${DIR}"], cwd: "${DIR}" }',
    '  b: { url: "https://${HOST}/mcp", headers: { Authorization: "Bearer ${TOKEN}" } }',
  ].join('\n');
  const { config } = parseConfig(text, 'a.yaml', {
    env: { BIN: 'srv', DIR: '/d', HOST: 'h.example', TOKEN: 't' },
  });
  assert.deepEqual(pick(config.servers['a'], STDIO_FIELDS), {
    command: 'srv',
    args: ['--dir', '/d'],
    cwd: '/d',
    env: {},
    disabled: false,
    priority: 0,
  });
  assert.deepEqual(pick(config.servers['b'], REMOTE_FIELDS), {
    url: 'https://h.example/mcp',
    headers: { Authorization: 'Bearer t' },
    disabled: false,
    priority: 0,
  });
});

test('reports every missing variable at once', () => {
  const text = ['servers:', '  a: { command: "${ONE}", args: ["${TWO}"] }'].join('\n');
  const err = rejects(text, 'a.yaml', { env: {} });
  assert.deepEqual(
    err.issues.map((i) => i.path),
    ['servers.a.command', 'servers.a.args[0]'],
  );
});

test('a VS Code ${input:...} reference is an error that says to use an environment variable', () => {
  const err = rejects(github('${input:github-token}'), 'a.yaml', { env: {} });
  assert.match(
    issueAt(err, 'servers.github.env.GITHUB_TOKEN').message,
    /a VS Code input that only the editor can prompt for: reference an environment variable instead, e\.g\. \$\{GITHUB_TOKEN\}/,
  );
});

test('an unterminated or malformed reference names the path and the expected form', () => {
  const unterminated = rejects(github('${GH_TOKEN'), 'a.yaml', { env: {} });
  assert.match(issueAt(unterminated, 'servers.github.env.GITHUB_TOKEN').message, /without a closing '\}'/);
  const malformed = rejects(github('${GH TOKEN}'), 'a.yaml', { env: {} });
  assert.match(
    issueAt(malformed, 'servers.github.env.GITHUB_TOKEN').message,
    /expected \$\{NAME\}, \$\{NAME:-default\} or \$\{env:NAME\}/,
  );
});

test('does not echo a value that came from the environment in a validation error', () => {
  const err = rejects('servers:\n  a: { url: "${SECRET_URL}" }\n', 'a.yaml', {
    env: { SECRET_URL: 'hunter2' },
  });
  assert.equal(
    issueAt(err, 'servers.a.url').message,
    'expected an http:// or https:// URL, got a string (not shown)',
  );
  assert.doesNotMatch(err.message, /hunter2/);
});

test('a reference that fails is reported once, not again by the schema check of its raw text', () => {
  const err = rejects('servers:\n  a: { url: "${MISSING_URL}" }\n', 'a.yaml', { env: {} });
  assert.equal(err.issues.length, 1);
  assert.match(issueAt(err, 'servers.a.url').message, /MISSING_URL is not set/);
});

test('keys are not resolved, only values', () => {
  const { config } = parseConfig(github('x').replace('GITHUB_TOKEN', '${KEY}'), 'a.yaml', {
    env: { KEY: 'k' },
  });
  assert.deepEqual(envOf(config, 'github'), { '${KEY}': 'x' });
});
