// Replacing a file whole: the new content in place, nothing left aside, and a link planted where
// the file or its aside copy would go neither written through nor kept.
import assert from 'node:assert/strict';
import {
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { replaceFile } from '../../src/state/file-replace.js';

test('a file is replaced whole, owner-only, with nothing left beside it', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-replace-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'checkpoint');
  writeFileSync(file, 'old\n', { mode: 0o644 });
  replaceFile(file, 'new\n');
  assert.equal(readFileSync(file, 'utf8'), 'new\n');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(dir), ['checkpoint']);
});

test('a link planted in place of the file is replaced, and what it pointed at is untouched', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-replace-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const mine = join(dir, 'mine');
  writeFileSync(mine, 'forged\n');
  const file = join(dir, 'checkpoint');
  symlinkSync(mine, file);
  // The name the aside copy had before it was random: a link there is not followed either.
  symlinkSync(mine, `${file}.tmp`);
  replaceFile(file, 'signed\n');
  assert.ok(!lstatSync(file).isSymbolicLink(), 'a file of its own now');
  assert.equal(readFileSync(file, 'utf8'), 'signed\n');
  assert.equal(readFileSync(mine, 'utf8'), 'forged\n', 'the link target was not written');
});
