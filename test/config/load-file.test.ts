// loadConfig reads files, reports a missing one by name, applies overrides, and returns a frozen result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig, parseConfig } from '../../src/config/load.js';
import { isStdioBackend } from '../../src/config/schema.js';

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-config-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('loads a YAML file from disk with the environment it is given', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'switchboard.yaml');
    await writeFile(file, 'servers:\n  a:\n    command: ${BIN}\n');
    const { config, file: loadedFrom } = await loadConfig(file, { env: { BIN: 'server-a' } });
    assert.equal(loadedFrom, file);
    const a = config.servers['a'];
    assert.ok(a && isStdioBackend(a));
    assert.equal(a.command, 'server-a');
  });
});

test('a missing file is a config_not_found error naming the file', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'nope.yaml');
    await assert.rejects(loadConfig(file), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.code, 'config_not_found');
      assert.equal(err.message, `${file}: file not found`);
      return true;
    });
  });
});

test('a directory given as the file is a config_unreadable error naming it', async () => {
  await withDir(async (dir) => {
    await assert.rejects(loadConfig(dir), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.code, 'config_unreadable');
      assert.equal(err.message, `${dir}: is a directory, expected a configuration file`);
      return true;
    });
  });
});

test('a byte-order mark at the start of a JSON file is tolerated', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'claude_desktop_config.json');
    await writeFile(file, '\uFEFF{"mcpServers": {"a": {"command": "x"}}}');
    const { config } = await loadConfig(file, { env: {} });
    assert.deepEqual(Object.keys(config.servers), ['a']);
  });
});

test('the result is deeply frozen', () => {
  const loaded = parseConfig('servers:\n  a: { command: x, args: [y], env: { K: v } }\n', 'a.yaml', {
    env: {},
  });
  const a = loaded.config.servers['a'];
  assert.ok(a && isStdioBackend(a));
  assert.ok(Object.isFrozen(loaded));
  assert.ok(Object.isFrozen(loaded.config));
  assert.ok(Object.isFrozen(loaded.config.http));
  assert.ok(Object.isFrozen(a.args));
  assert.ok(Object.isFrozen(a.env));
  assert.ok(Object.isFrozen(loaded.warnings));
  assert.throws(() => {
    (a.args as string[]).push('z');
  }, TypeError);
  assert.throws(() => {
    (a.env as Record<string, string>)['K'] = 'changed';
  }, TypeError);
});

test('overrides win over the file and their problems are reported against the command line', () => {
  const text = 'http:\n  port: 1234\n  host: 0.0.0.0\n  auth: { mode: none }\n';
  const { config } = parseConfig(text, 'a.yaml', {
    env: {},
    overrides: { http: { port: 9000, host: undefined }, log: { level: 'debug' } },
  });
  assert.equal(config.http.port, 9000);
  assert.equal(config.http.host, '0.0.0.0');
  assert.equal(config.log.level, 'debug');

  assert.throws(
    () =>
      parseConfig(text, 'a.yaml', {
        env: {},
        overrides: { http: { port: 99999 } },
        overridesLabel: '--port',
      }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.message, '--port: http.port: expected at most 65535, got a number (99999)');
      return true;
    },
  );
});

test('a path starting with ~ is warned of where it is: nothing expands it', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'switchboard.yaml');
    const text =
      'servers:\n  a:\n    command: server-a\n    args: [--data, ~/data]\nvault:\n  keyFile: ~/vault.key\naudit:\n  path: ${HOME}/audit.sqlite\n';
    await writeFile(file, text);
    const { warnings } = await loadConfig(file, { env: { HOME: '/home/someone' } });
    assert.deepEqual(
      warnings.map((w) => [w.path, w.line]),
      [
        ['servers.a.args[1]', 4],
        ['vault.keyFile', 6],
      ],
    );
    assert.match(warnings[0]!.message, /not expanded.*write \$\{HOME\}/);
  });
});
