// Which paths under /tmp a sandboxed backend names but cannot see: its working directory and
// `read` paths bring /tmp back only where they lie under it (as the view binds them), so one whose
// working directory is `/` (a service's default) is still warned of.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Config, isStdioBackend } from '../../src/config/schema.js';
import { hiddenByPrivateTmp } from '../../src/sandbox/private-tmp.js';

function hidden(server: object, sandbox: object = {}): string[] {
  const config = Config.parse({ servers: { s: server }, sandbox });
  const backend = config.servers['s']!;
  assert.ok(isStdioBackend(backend));
  return hiddenByPrivateTmp(backend, config.sandbox);
}

test('a script under /tmp is hidden whatever the working directory outside /tmp is, / included', () => {
  for (const cwd of ['/', '/home/someone', '/srv'])
    assert.deepEqual(
      hidden({ command: 'node', args: ['/tmp/x/server.mjs'], cwd }),
      ['/tmp/x/server.mjs'],
      cwd,
    );
  assert.deepEqual(hidden({ command: 'node', args: ['--require=/tmp/x/pre.cjs', 'a.mjs'], cwd: '/' }), [
    '/tmp/x/pre.cjs',
  ]);
});

test('a working directory, read or write path under /tmp that holds it binds it back', () => {
  const server = { command: 'node', args: ['/tmp/x/server.mjs'] };
  assert.deepEqual(hidden({ ...server, cwd: '/tmp/x' }), []);
  assert.deepEqual(hidden({ ...server, cwd: '/', sandbox: { read: ['/tmp/x'] } }), []);
  assert.deepEqual(hidden({ ...server, cwd: '/' }, { write: ['/tmp'] }), []);
  // Read from / does not bring /tmp back: the root is there already, its /tmp replaced.
  assert.deepEqual(hidden({ ...server, cwd: '/srv', sandbox: { read: ['/'] } }), ['/tmp/x/server.mjs']);
});
