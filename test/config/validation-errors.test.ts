// Validation errors name the file, the path inside it and what was expected, in words a person can act on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/config/load.js';
import { issueAt, rejects } from './helpers.js';

test('a string where an array is expected names the file, the path, the expectation and what was found', () => {
  const err = rejects('servers:\n  memory:\n    command: npx\n    args: -y\n', 'switchboard.yaml');
  assert.ok(err instanceof ConfigError);
  assert.equal(
    err.message,
    'switchboard.yaml: servers.memory.args: expected an array of strings, got a string ("-y") (line 4)',
  );
});

test('an unknown key close to a known one is reported with a suggestion', () => {
  const err = rejects('servers:\n  memory:\n    command: npx\n    agrs: [-y]\n', 'switchboard.yaml');
  assert.equal(issueAt(err, 'servers.memory').message, "unknown key 'agrs' (did you mean 'args'?)");
});

test('a server entry with neither command nor url says both shapes and suggests the misspelt key', () => {
  const err = rejects('servers:\n  memory:\n    comand: npx\n', 'switchboard.yaml');
  assert.equal(
    issueAt(err, 'servers.memory').message,
    "expected either a stdio server (command, args, env) or a remote server (url, headers), got a mapping with 'comand'; unknown key 'comand' (did you mean 'command'?)",
  );
});

test('a server entry that is not a mapping says both shapes', () => {
  const err = rejects('servers:\n  memory: npx server-memory\n', 'switchboard.yaml');
  assert.equal(
    issueAt(err, 'servers.memory').message,
    'expected either a stdio server (command, args, env) or a remote server (url, headers), got a string ("npx server-memory")',
  );
});

test('an unknown key with no close match lists the keys that are allowed', () => {
  const err = rejects('http:\n  bind: 0.0.0.0\n', 'switchboard.yaml');
  assert.equal(
    issueAt(err, 'http').message,
    "unknown key 'bind' (expected one of: host, port, path, dnsRebindingProtection, allowedHosts, allowedOrigins, corsOrigins, sessions, streams, auth)",
  );
});

test('a remote-server key on a stdio server says which kind of server it belongs to', () => {
  const err = rejects('servers:\n  a:\n    command: x\n    headers: {}\n', 'switchboard.yaml');
  assert.match(issueAt(err, 'servers.a').message, /unknown key 'headers': it belongs to remote servers/);
});

test('a server with both command and url is told to be one or the other', () => {
  const err = rejects('servers:\n  a: { command: x, url: "https://x.example" }\n', 'switchboard.yaml');
  assert.match(issueAt(err, 'servers.a').message, /got both a command and a url/);
});

test('a number where a string is expected says to quote it', () => {
  const err = rejects('servers:\n  a:\n    command: x\n    args: [--port, 8080]\n', 'switchboard.yaml');
  assert.equal(
    issueAt(err, 'servers.a.args[1]').message,
    'expected a string, got a number (8080) (quote it to make it a string: "8080")',
  );
});

test('a misspelt enum value gets a suggestion and the list of allowed values', () => {
  const err = rejects('namespacing:\n  mode: alwys\n', 'switchboard.yaml');
  assert.equal(
    issueAt(err, 'namespacing.mode').message,
    'expected one of "conditional", "always", "never", got a string ("alwys") (did you mean "always"?)',
  );
});

test('out-of-range numbers, bad URLs and bad names say what would be accepted', () => {
  const text = [
    'servers:',
    '  "bad name": { command: x }',
    '  web: { url: "file:///etc/passwd" }',
    '  a: { command: "" }',
    'http: { port: 70000, path: mcp, corsOrigins: ["https://app.example", "null", "https://app.example/"] }',
  ].join('\n');
  const err = rejects(text, 'switchboard.yaml');
  assert.equal(issueAt(err, 'http.port').message, 'expected at most 65535, got a number (70000)');
  assert.equal(issueAt(err, 'http.path').message, 'expected text starting with "/", got a string ("mcp")');
  // A browser sends null from any sandboxed page or file: it names no one, so it cannot be trusted.
  for (const [i, got] of [
    [1, '"null"'],
    [2, '"https://app.example/"'],
  ] as const)
    assert.match(
      issueAt(err, `http.corsOrigins[${i}]`).message,
      new RegExp(`^expected a web origin .*, got ${got}$`),
    );
  assert.ok(!err.issues.some((i) => i.path === 'http.corsOrigins[0]'), 'a web origin is accepted');
  assert.equal(
    issueAt(err, 'servers.web.url').message,
    'expected an http:// or https:// URL, got a string ("file:///etc/passwd")',
  );
  assert.equal(issueAt(err, 'servers.a.command').message, 'expected a non-empty string, got an empty string');
  assert.equal(
    issueAt(err, 'servers').message,
    'invalid name "bad name": expected a name of letters, digits, _ . - (at most 64)',
  );
  assert.equal(issueAt(err, 'servers').line, 2);
});

test('a top level that is not a mapping is rejected naming the file', () => {
  const err = rejects('- a\n- b\n', 'switchboard.yaml');
  assert.equal(
    err.message,
    'switchboard.yaml: expected a mapping at the top level (servers: …, or mcpServers: … as Claude Desktop writes it), got an array',
  );
});

test('a YAML syntax error names the file, the line and the column', () => {
  const err = rejects('servers:\n  a:\n    command: "npx\n    args: []\n  b: [\n', 'switchboard.yaml');
  const first = err.issues[0];
  assert.ok(first);
  assert.equal(first.file, 'switchboard.yaml');
  assert.ok(first.line !== undefined && first.line >= 3, err.message);
  assert.ok(first.column !== undefined, err.message);
  assert.match(err.message, /^switchboard\.yaml: line \d+, column \d+: invalid YAML: /);
});

test('a duplicate YAML key is an error at the second occurrence', () => {
  const err = rejects('servers:\n  a: { command: x }\n  a: { command: y }\n', 'switchboard.yaml');
  assert.match(err.message, /^switchboard\.yaml: line 3, column 3: invalid YAML: map keys must be unique/);
});

test('a JSON syntax error names the file, the line and the column in JSON terms', () => {
  const err = rejects(
    '{\n  "mcpServers": {\n    "fs": { "command": "npx" "args": [] }\n  }\n}\n',
    'claude_desktop_config.json',
  );
  assert.equal(err.issues.length, 1);
  const issue = err.issues[0];
  assert.equal(issue?.line, 3);
  assert.equal(issue?.column, 30);
  assert.match(err.message, /^claude_desktop_config\.json: line 3, column 30: invalid JSON: /);
});

test('lists every problem in the file, one per line', () => {
  const err = rejects(
    'servers:\n  a: { command: x, args: y }\nlog: { level: loud }\nlimits: { startupTimeoutMs: 5 }\n',
    's.yaml',
  );
  assert.deepEqual(
    err.issues.map((i) => i.path),
    ['servers.a.args', 'limits.startupTimeoutMs', 'log.level'],
  );
  assert.equal(err.message.split('\n').length, 3);
});

test('a literal value under a credential name is described but not echoed', () => {
  const err = rejects(
    'servers:\n  a:\n    url: "https://x.example"\n    headers: { Authorization: 12345678 }\n',
    's.yaml',
  );
  assert.equal(
    issueAt(err, 'servers.a.headers.Authorization').message,
    'expected a string, got a number (not shown) (quote it to make it a string)',
  );
  assert.doesNotMatch(err.message, /12345678/);
});

test('a remote server takes exactly one of url and urls', () => {
  const both = rejects(
    'servers:\n  a: { url: "https://x.example", urls: ["https://y.example"] }\n',
    'switchboard.yaml',
  );
  assert.equal(
    both.message,
    'switchboard.yaml: servers.a: expected either url (one endpoint) or urls (replicas), got both (line 2)',
  );
  const neither = rejects('servers:\n  a: { type: http }\n', 'switchboard.yaml');
  assert.match(issueAt(neither, 'servers.a').message, /expected url \(one endpoint\) or urls \(replicas\)/);
  const empty = rejects('servers:\n  a: { urls: [] }\n', 'switchboard.yaml');
  assert.match(issueAt(empty, 'servers.a.urls').message, /expected at least 1 entries/);
  const scheme = rejects('servers:\n  a: { urls: ["https://x.example", "ftp://y"] }\n', 'switchboard.yaml');
  assert.match(issueAt(scheme, 'servers.a.urls[1]').message, /expected an http:\/\/ or https:\/\/ URL/);
});

test('a remote server’s headers may not set those its client writes, whatever their case', () => {
  const err = rejects(
    'servers:\n  web:\n    url: https://mcp.example/mcp\n    headers:\n      Authorization: Bearer x\n      mcp-SESSION-id: abc\n      Content-Type: text/plain\n',
    'switchboard.yaml',
  );
  assert.match(
    issueAt(err, 'servers.web.headers.mcp-SESSION-id').message,
    /mcp-SESSION-id is written by switchboard's client .*: remove it/,
  );
  assert.ok(issueAt(err, 'servers.web.headers.Content-Type'));
  assert.ok(!err.message.includes('Authorization'), 'a header of the backend’s own is fine');
});

test('replicas is a whole number of at least 1, and a remote server lists its replicas in urls', () => {
  const zero = rejects('servers:\n  a: { command: x, replicas: 0 }\n', 'switchboard.yaml');
  assert.equal(issueAt(zero, 'servers.a.replicas').message, 'expected at least 1, got a number (0)');
  const remote = rejects('servers:\n  a: { url: "https://x.example", replicas: 2 }\n', 'switchboard.yaml');
  assert.match(issueAt(remote, 'servers.a').message, /replicas are listed in urls/);
  const mixed = rejects('servers:\n  a: { command: x, urls: ["https://x.example"] }\n', 'switchboard.yaml');
  assert.match(issueAt(mixed, 'servers.a').message, /got both a command and urls/);
});

test('A2A paths that would shadow the MCP endpoint are refused, each naming both paths', () => {
  const at = (yaml: string, key: string) => issueAt(rejects(yaml, 'switchboard.yaml'), key).message;
  assert.match(
    at('a2a:\n  serve:\n    enabled: true\n    path: /mcp\n', 'a2a.serve.path'),
    /\/mcp is the MCP endpoint/,
  );
  assert.match(
    at(
      'http:\n  path: /tools\na2a:\n  serve:\n    enabled: true\n    restPath: /tools/rest\n',
      'a2a.serve.restPath',
    ),
    /\/tools\/rest and the MCP endpoint \(http.path \/tools\) overlap/,
  );
  // The REST base answers everything under it: an MCP endpoint there would never be reached.
  assert.match(
    at('http:\n  path: /a2a/rest/mcp\na2a:\n  serve:\n    enabled: true\n', 'a2a.serve.restPath'),
    /overlap/,
  );
  // A disabled agent claims no path.
  assert.doesNotThrow(() => parseConfig('a2a:\n  serve:\n    path: /mcp\n', 'switchboard.yaml', { env: {} }));
});

test('push notifications on a front that tells no callers apart (local token, or none) are refused, naming both settings', () => {
  const push =
    'a2a:\n  serve:\n    enabled: true\n    pushNotifications: { enabled: true, allow: ["https://hooks.example.com/"] }\n';
  const message = issueAt(rejects(push, 'switchboard.yaml'), 'a2a.serve.pushNotifications.enabled').message;
  assert.match(message, /http\.auth \(mode local\) makes every caller the one caller http/);
  assert.match(message, /a2a\.serve\.pushNotifications\.enabled off/);
  assert.throws(() => parseConfig(`http:\n  auth: { mode: none }\n${push}`, 'switchboard.yaml', { env: {} }));
  const keyed = `http:\n  auth:\n    keys: [{ name: a, sha256: "${'0'.repeat(64)}" }]\n${push}`;
  assert.doesNotThrow(() => parseConfig(keyed, 'switchboard.yaml', { env: {} }));
});

test('a duration waited out with a timer is refused past what a timer keeps; a lifetime may be longer', () => {
  // Node fires a timer longer than 2^31 - 1 ms at once: callMs meant as "never" failed every call.
  const past = 2 ** 31;
  const timers: [string, string][] = [
    [`servers:\n  a:\n    command: x\n    timeouts:\n      callMs: ${past}\n`, 'servers.a.timeouts.callMs'],
    [
      `servers:\n  a:\n    command: x\n    timeouts:\n      tools:\n        t:\n          idleMs: ${past}\n`,
      'servers.a.timeouts.tools.t.idleMs',
    ],
    [`http:\n  streams:\n    keepMs: ${past}\n`, 'http.streams.keepMs'],
    [`http:\n  sessions:\n    detachedCallMs: ${past}\n`, 'http.sessions.detachedCallMs'],
    [`limits:\n  startupTimeoutMs: ${past}\n`, 'limits.startupTimeoutMs'],
    [`shutdown:\n  drainMs: ${past}\n`, 'shutdown.drainMs'],
  ];
  for (const [text, path] of timers) {
    const err = rejects(text, 'switchboard.yaml');
    assert.equal(issueAt(err, path).message, `expected at most 2147483647, got a number (${past})`);
  }
  // The longest a timer keeps is accepted, and a session's lifetime (compared with the clock) may exceed it.
  const ok = parseConfig(
    `servers:\n  a:\n    command: x\n    timeouts:\n      callMs: ${past - 1}\nhttp:\n  sessions:\n    ttlMs: ${40 * 86_400_000}\n`,
    'switchboard.yaml',
    { env: {} },
  );
  assert.equal(ok.config.servers.a?.timeouts.callMs, past - 1);
});

test('a checkpoint interval in seconds is bounded as a timer is', () => {
  const err = rejects('audit:\n  checkpoint:\n    everySeconds: 3000000\n', 'switchboard.yaml');
  assert.equal(
    issueAt(err, 'audit.checkpoint.everySeconds').message,
    'expected at most 2147483, got a number (3000000)',
  );
});

test('a topic or scope pattern no name could match is refused, saying what a name looks like', () => {
  const err = rejects(
    "events:\n  topics:\n    'bad topic': { durable: true }\n    'builds.*': { durable: true }\ncontext:\n  scopes:\n    'nospace here': {}\n    'server:*': {}\n    '*': {}\n    'team*': {}\n    '*-prod': {}\n    'glob*': {}\n",
    'switchboard.yaml',
  );
  assert.match(
    issueAt(err, 'events.topics').message,
    /invalid name "bad topic": expected a topic pattern: dotted/,
  );
  assert.match(
    issueAt(err, 'context.scopes').message,
    /invalid name "nospace here": expected a scope pattern/,
  );
  assert.equal((err as ConfigError).issues.length, 2);
});
