// Command injection through launch config: switchboard spawns a server's command with its
// arguments as argv entries, with no shell, so shell syntax in either is inert text.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Config } from '../../src/config/schema.js';
import { startSwitchboard } from '../../src/switchboard.js';
import { silentLogger } from '../../src/log.js';

test('shell syntax in a command or its arguments is never run', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-inject-'));
  const argvFile = join(dir, 'argv.json');
  const script = join(dir, 'record.cjs');
  // A "server" that writes down the argv it got and exits: switchboard's start fails, harmlessly.
  writeFileSync(
    script,
    `require('fs').writeFileSync(${JSON.stringify(argvFile)}, JSON.stringify(process.argv.slice(2)))`,
  );
  const hostile = [
    `; touch ${join(dir, 'semicolon')}`,
    `$(touch ${join(dir, 'subst')})`,
    `\`touch ${join(dir, 'tick')}\``,
    '| cat /etc/passwd',
  ];
  const sb = await startSwitchboard({
    log: silentLogger,
    config: Config.parse({
      http: { port: 0 },
      limits: { startupTimeoutMs: 5_000 },
      servers: {
        args: {
          command: process.execPath,
          args: [script, ...hostile],
          era: 'legacy',
          sandbox: { write: [dir] },
        },
        command: { command: `${process.execPath}; touch ${join(dir, 'command')}`, era: 'legacy' },
      },
    }),
  });
  t.after(() => sb.stop());
  assert.deepEqual(sb.failedBackends.map((f) => f.name).sort(), ['args', 'command']);
  assert.deepEqual(JSON.parse(readFileSync(argvFile, 'utf8')), hostile);
  for (const marker of ['semicolon', 'subst', 'tick', 'command'])
    assert.equal(existsSync(join(dir, marker)), false, marker);
});
