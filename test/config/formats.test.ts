// The three accepted file formats (switchboard YAML, mcpServers JSON, VS Code mcp.json) load into the same Config.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, formatIssue } from '../../src/config/errors.js';
import { parseConfig } from '../../src/config/load.js';
import { isStdioBackend } from '../../src/config/schema.js';
import { issueAt, pick, rejects, REMOTE_FIELDS, STDIO_FIELDS } from './helpers.js';

const env = {};

test('reads switchboard YAML and fills in the defaults', () => {
  const { config, format, warnings } = parseConfig(
    [
      'servers:',
      '  memory:',
      '    command: npx',
      '    args: [-y, "@modelcontextprotocol/server-memory"]',
      '  github:',
      '    type: sse',
      '    url: https://example.com/sse',
      'http:',
      '  port: 8080',
    ].join('\n'),
    'switchboard.yaml',
    { env },
  );
  assert.equal(format, 'switchboard');
  assert.deepEqual(warnings, []);
  const memory = config.servers['memory'];
  assert.ok(memory && isStdioBackend(memory));
  assert.deepEqual(memory.args, ['-y', '@modelcontextprotocol/server-memory']);
  assert.deepEqual(memory.env, {});
  assert.equal(memory.disabled, false);
  assert.deepEqual(pick(config.servers['github'], REMOTE_FIELDS), {
    type: 'sse',
    url: 'https://example.com/sse',
    headers: {},
    disabled: false,
    priority: 0,
  });
  assert.equal(config.http.port, 8080);
  assert.equal(config.http.host, '127.0.0.1');
  assert.equal(config.namespacing.mode, 'conditional');
});

test('an empty file is refused (a file being written is not a configuration with every default); servers: {} is none', () => {
  for (const text of ['', '  \n', '# nothing yet\n', '\uFEFF']) {
    assert.throws(
      () => parseConfig(text, 'switchboard.yaml', { env }),
      (err: ConfigError) =>
        err.issues.length === 1 &&
        /^the file is empty \(or only comments\): expected/.test(err.issues[0]!.message),
      JSON.stringify(text),
    );
  }
  assert.throws(() => parseConfig('', 'mcp.json', { env }), /the file is empty/);
  const { config } = parseConfig('servers: {}\n', 'switchboard.yaml', { env });
  assert.deepEqual(config.servers, {});
  assert.equal(config.log.level, 'info');
});

test('a key given twice in a JSON file is refused with its line, as in YAML', () => {
  const text = '{"mcpServers": {\n  "a": {"command": "true"},\n  "a": {"command": "false"}\n}}\n';
  assert.throws(
    () => parseConfig(text, 'mcp.json', { env }),
    (err: ConfigError) =>
      err.issues.length === 1 &&
      err.issues[0]!.line === 3 &&
      err.issues[0]!.message === 'invalid JSON: the key "a" is given twice',
  );
});

test('YAML anchors under x- keys and merge keys share settings between servers', () => {
  const { config } = parseConfig(
    [
      'x-node: &node',
      '  command: node',
      '  env: { NODE_ENV: production }',
      'servers:',
      '  a:',
      '    <<: *node',
      '    args: [a.js]',
    ].join('\n'),
    'switchboard.yaml',
    { env },
  );
  assert.deepEqual(pick(config.servers['a'], STDIO_FIELDS), {
    command: 'node',
    args: ['a.js'],
    env: { NODE_ENV: 'production' },
    disabled: false,
    priority: 0,
  });
});

test('reads a Claude Desktop file, ignoring its non-MCP keys and host-only server keys with warnings', () => {
  const text = JSON.stringify(
    {
      globalShortcut: 'Ctrl+Space',
      preferences: { quickEntry: true },
      mcpServers: {
        filesystem: {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
          env: { DEBUG: '1' },
          autoApprove: ['read_file'],
          alwaysAllow: [],
          timeout: 60,
        },
        memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], disabled: true },
      },
    },
    null,
    2,
  );
  const { config, format, warnings } = parseConfig(text, 'claude_desktop_config.json', { env });
  assert.equal(format, 'mcpServers');
  assert.deepEqual(pick(config.servers['filesystem'], STDIO_FIELDS), {
    command: 'npx',
    args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
    env: { DEBUG: '1' },
    disabled: false,
    priority: 0,
  });
  assert.equal(config.servers['memory']?.disabled, true);
  const messages = warnings.map(formatIssue);
  assert.ok(
    messages.includes(
      'claude_desktop_config.json: ignored top-level keys that do not configure MCP servers: globalShortcut, preferences',
    ),
    messages.join('\n'),
  );
  const hostOnly = warnings.find((w) => w.path === 'mcpServers.filesystem');
  assert.match(hostOnly?.message ?? '', /ignored host-only keys autoApprove, alwaysAllow, timeout/);
  assert.equal(hostOnly?.line, 7);
});

test('reads Cursor remote entries (url, headers) and Windsurf serverUrl', () => {
  const text = JSON.stringify({
    mcpServers: {
      remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } },
      legacy: { type: 'sse', url: 'https://mcp.example.com/sse' },
      windsurf: { serverUrl: 'https://mcp.example.com/ws', type: 'streamableHttp' },
    },
  });
  const { config } = parseConfig(text, '.cursor/mcp.json', { env });
  assert.deepEqual(pick(config.servers['remote'], REMOTE_FIELDS), {
    url: 'https://mcp.example.com/mcp',
    headers: { Authorization: 'Bearer x' },
    disabled: false,
    priority: 0,
  });
  assert.equal(config.servers['legacy']?.type, 'sse');
  assert.deepEqual(pick(config.servers['windsurf'], REMOTE_FIELDS), {
    type: 'streamable-http',
    url: 'https://mcp.example.com/ws',
    headers: {},
    disabled: false,
    priority: 0,
  });
});

test('reports mcpServers errors at the path the file uses, including a renamed serverUrl', () => {
  const err = rejects(JSON.stringify({ mcpServers: { w: { serverUrl: 'ftp://x' } } }), 'mcp.json');
  const issue = issueAt(err, 'mcpServers.w.serverUrl');
  assert.equal(issue.message, 'expected an http:// or https:// URL, got a string ("ftp://x")');
});

test('rejects a file with both mcpServers and servers, naming servers', () => {
  const err = rejects(JSON.stringify({ mcpServers: {}, servers: {} }), 'mcp.json');
  assert.match(issueAt(err, 'servers').message, /not both/);
});

test('reads VS Code .vscode/mcp.json with comments and trailing commas, ignoring inputs with a warning', () => {
  const text = [
    '{',
    '  // Servers for this workspace',
    '  "inputs": [{ "type": "promptString", "id": "token", "password": true }],',
    '  "servers": {',
    '    "github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/", },',
    '    /* a local one */',
    '    "fs": { "type": "stdio", "command": "npx", "args": ["-y", "server-filesystem", "${workspaceFolder}"], "envFile": "${workspaceFolder}/.env" },',
    '  },',
    '}',
  ].join('\n');
  const { config, format, warnings } = parseConfig(text, '/home/me/project/.vscode/mcp.json', { env });
  assert.equal(format, 'vscode');
  assert.equal(config.servers['github']?.type, 'http');
  const fs = config.servers['fs'];
  assert.ok(fs && isStdioBackend(fs));
  assert.deepEqual(fs.args, ['-y', 'server-filesystem', '/home/me/project']);
  assert.ok(warnings.some((w) => w.path === 'inputs' && w.line === 3 && /ignored: inputs/.test(w.message)));
  // An empty list asks for nothing, and is not warned of.
  const none = parseConfig(
    '{ "inputs": [], "servers": { "s": { "type": "stdio", "command": "x" } } }',
    'mcp.json',
    {
      env,
    },
  );
  assert.ok(!none.warnings.some((w) => w.path === 'inputs'));
  assert.ok(warnings.some((w) => w.path === 'servers.fs' && /envFile is not read/.test(w.message)));
});

test('recognises a VS Code file by a VS Code-only server key even without inputs', () => {
  const text = JSON.stringify({ servers: { fs: { type: 'stdio', command: 'x', dev: { watch: 'src/**' } } } });
  const { format, warnings } = parseConfig(text, 'workspace-mcp.json', { env });
  assert.equal(format, 'vscode');
  assert.match(warnings[0]?.message ?? '', /ignored host-only key dev/);
});

test('a JSON switchboard file may name its $schema', () => {
  const text = JSON.stringify({
    $schema: './schema/switchboard.schema.json',
    servers: { a: { command: 'x' } },
  });
  const { format, config } = parseConfig(text, 'switchboard.json', { env });
  assert.equal(format, 'switchboard');
  assert.deepEqual(Object.keys(config.servers), ['a']);
});

test("a host file's server that names directories is told it cannot write there, and granted nothing", () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-named-dir-'));
  const text = JSON.stringify({
    mcpServers: {
      files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', dir, `${dir}/gone`] },
      flagged: { command: 'node', args: [`--root=${dir}`, 'server.mjs'] },
      own: { command: 'npx', args: [dir], sandbox: { read: [dir] } },
    },
  });
  const { config, warnings } = parseConfig(text, 'claude_desktop_config.json', { env });
  const files = config.servers['files'];
  assert.ok(files && isStdioBackend(files));
  assert.deepEqual(files.sandbox, undefined, 'nothing granted by itself');
  const said = (name: string) => warnings.find((w) => w.path === `mcpServers.${name}`)?.message ?? '';
  assert.match(
    said('files'),
    new RegExp(`its arguments name ${dir}: .*list them under servers\\.files\\.sandbox\\.write`),
  );
  assert.doesNotMatch(said('files'), /gone/, 'only directories that exist');
  assert.match(said('flagged'), new RegExp(`its arguments name ${dir}:`));
  assert.equal(said('own'), '', 'an entry with its own sandbox settings is not told');
});
