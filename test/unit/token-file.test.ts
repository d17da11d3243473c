// A token file made by several processes at once ends as one token, the one every one of them
// answers with; it is owner-only, and a file too short to be a token is replaced.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tokenFile } from '../../src/state/token-file.js';

const MODULE = fileURLToPath(new URL('../../src/state/token-file.js', import.meta.url));

/** A process that makes the token file once `go` exists (spinning for it, to start together). */
function maker(path: string, go: string): { ready: Promise<void>; token: Promise<string> } {
  const code = [
    `import { existsSync } from 'node:fs';`,
    `import { tokenFile } from ${JSON.stringify(MODULE)};`,
    `process.stderr.write('ready');`,
    `while (!existsSync(${JSON.stringify(go)}));`,
    `process.stdout.write(tokenFile(${JSON.stringify(path)}));`,
  ].join('\n');
  const child = spawn(process.execPath, ['--input-type=module', '-e', code]);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return {
    ready: new Promise((resolve) => child.stderr.once('data', () => resolve())),
    token: new Promise((resolve, reject) =>
      child.once('exit', (c) => (c === 0 ? resolve(out) : reject(new Error(`exit ${c}`)))),
    ),
  };
}

test('processes making one token file at once all answer with the one it holds', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (let round = 0; round < 4; round++) {
    const path = join(dir, `state-${round}`, 'http-token');
    const go = join(dir, `go-${round}`);
    const makers = Array.from({ length: 4 }, () => maker(path, go));
    await Promise.all(makers.map((m) => m.ready));
    writeFileSync(go, '');
    const tokens = await Promise.all(makers.map((m) => m.token));
    const kept = readFileSync(path, 'utf8').trim();
    assert.deepEqual(new Set(tokens), new Set([kept]), `round ${round}`);
    assert.equal(statSync(path).mode & 0o777, 0o600);
  }
});

test('a file too short to be a token is replaced; a token is kept', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'http-token');
  writeFileSync(path, 'short\n', { mode: 0o644 });
  const token = tokenFile(path);
  assert.ok(token.length >= 32);
  assert.equal(readFileSync(path, 'utf8').trim(), token);
  assert.equal(tokenFile(path), token);
  assert.equal(statSync(path).mode & 0o777, 0o600);
});
