// Backends whose resource-URI prefixes collide after lowercasing and `_` → `-` are refused, naming both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/load.js';
import { uriPrefix } from '../../src/config/prefixes.js';
import { issueAt, rejects } from './helpers.js';

test('the URI prefix is the prefix or the name, lowercased, with _ replaced by -', () => {
  assert.equal(uriPrefix('My_Server', {}), 'my-server');
  assert.equal(uriPrefix('whatever', { prefix: 'Git_Hub' }), 'git-hub');
});

test('two backends whose names map to the same URI prefix are an error naming both', () => {
  const err = rejects(
    'servers:\n  my_server: { command: a }\n  My-Server: { command: b }\n',
    'switchboard.yaml',
  );
  assert.equal(
    err.message,
    "switchboard.yaml: servers.My-Server: URI prefix 'my-server' (from its name) collides with servers.my_server: resource URIs of both would read 'my-server+<uri>'; give one of them a different prefix (line 3)",
  );
});

test('an explicit prefix that collides with another backend is reported at that prefix', () => {
  const err = rejects(
    'servers:\n  github: { command: a }\n  gh:\n    command: b\n    prefix: GitHub\n',
    'switchboard.yaml',
  );
  assert.match(
    issueAt(err, 'servers.gh.prefix').message,
    /URI prefix 'github' \(from its prefix\) collides with servers\.github/,
  );
  assert.equal(issueAt(err, 'servers.gh.prefix').line, 5);
});

test('a distinct prefix resolves a collision', () => {
  const { config } = parseConfig(
    'servers:\n  my_server: { command: a }\n  my-server: { command: b, prefix: other }\n',
    'switchboard.yaml',
    { env: {} },
  );
  assert.deepEqual(Object.keys(config.servers), ['my_server', 'my-server']);
});

test('a disabled backend does not collide', () => {
  const { config } = parseConfig(
    'servers:\n  my_server: { command: a }\n  my-server: { command: b, disabled: true }\n',
    'switchboard.yaml',
    { env: {} },
  );
  assert.equal(config.servers['my-server']?.disabled, true);
});

test('a prefix that does not start with a letter is refused, since a URI scheme must', () => {
  const err = rejects('servers:\n  1password: { command: op-mcp }\n', 'switchboard.yaml');
  assert.match(
    issueAt(err, 'servers["1password"]').message,
    /expected a URI prefix that starts with a letter, got '1password'/,
  );
});
