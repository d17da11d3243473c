// The sandbox's bound paths pinned as descriptors before bwrap runs: what is opened is the place
// the view found (a link swapped in since, at the end of the path or on its way, is refused), a
// missing cache is left out rather than looked up again by name, and nothing stays open on failure.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { bwrapArgs } from '../../src/sandbox/bwrap-args.js';
import { pinMounts } from '../../src/sandbox/pinned-paths.js';
import type { Mount } from '../../src/sandbox/sandbox-view.js';

function scratch(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-pins-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const openFds = () => readdirSync('/proc/self/fd').length;

test('read, write and cache sources are pinned in order as the child’s 3, 4, …; the rest are kept as they are', (t) => {
  const dir = scratch(t);
  for (const d of ['r', 'w', 'c']) mkdirSync(join(dir, d));
  const mounts: Mount[] = [
    { kind: 'root' },
    { kind: 'read', path: join(dir, 'r') },
    { kind: 'cache', path: join(dir, 'c') },
    { kind: 'cache', path: join(dir, 'not-made') },
    { kind: 'write', path: join(dir, 'w') },
    { kind: 'hide-dir', path: join(dir, 'h') },
  ];
  const pinned = pinMounts(mounts);
  t.after(() => pinned.close());
  assert.equal(pinned.fds.length, 3);
  assert.deepEqual(
    pinned.mounts.map((m) => m.kind),
    ['root', 'read', 'cache', 'write', 'hide-dir'],
    'the missing cache is left out, not bound by name',
  );
  const args = bwrapArgs({
    mounts: pinned.mounts,
    pinned: pinned.childFd,
    network: false,
    chdir: dir,
    command: 'true',
    args: [],
  });
  const text = args.join(' ');
  assert.ok(text.includes(`--ro-bind-fd 3 ${join(dir, 'r')}`), text);
  assert.ok(text.includes(`--bind-fd 4 ${join(dir, 'c')}`), text);
  assert.ok(text.includes(`--bind-fd 5 ${join(dir, 'w')}`), text);
  assert.ok(text.includes(`--tmpfs ${join(dir, 'h')}`), text);
  assert.ok(!text.includes('not-made'), text);
  assert.ok(
    !/--(ro-)?bind(-try)? \//.test(text.replace('--ro-bind / /', '')),
    `nothing bound by name: ${text}`,
  );
});

test('a directory swapped for a link after the view found it is refused, and nothing stays open', (t) => {
  const dir = scratch(t);
  mkdirSync(join(dir, 'work', 'notes'), { recursive: true });
  mkdirSync(join(dir, 'secret'));
  mkdirSync(join(dir, 'first'));
  const notes = join(dir, 'work', 'notes');
  const mounts: Mount[] = [
    { kind: 'write', path: join(dir, 'first') },
    { kind: 'write', path: notes },
  ];
  // What a backend that may write `work` does between switchboard's check and bwrap's bind.
  renameSync(notes, join(dir, 'work', 'notes-old'));
  symlinkSync('../secret', notes);
  const before = openFds();
  assert.throws(() => pinMounts(mounts), /work\/notes became a symbolic link as its sandbox was laid out/);
  assert.equal(openFds(), before, 'the descriptor pinned before the refusal was closed');
});

test('a link swapped in on the way to a bound path is refused, naming where the path led', (t) => {
  const dir = scratch(t);
  mkdirSync(join(dir, 'work', 'proj', 'notes'), { recursive: true });
  mkdirSync(join(dir, 'secret', 'notes'), { recursive: true });
  const notes = join(dir, 'work', 'proj', 'notes');
  renameSync(join(dir, 'work', 'proj'), join(dir, 'work', 'proj-old'));
  symlinkSync('../secret', join(dir, 'work', 'proj'));
  const before = openFds();
  assert.throws(
    () => pinMounts([{ kind: 'read', path: notes }]),
    (err: Error) =>
      err.message.includes(`sandbox path ${notes} changed`) &&
      err.message.includes(`led to ${join(dir, 'secret', 'notes')}`),
  );
  assert.equal(openFds(), before);
});

test('a write path that is not there, or runs through a file, fails with its name; closing twice is harmless', (t) => {
  const dir = scratch(t);
  mkdirSync(join(dir, 'a'));
  const before = openFds();
  assert.throws(
    () =>
      pinMounts([
        { kind: 'read', path: join(dir, 'a') },
        { kind: 'write', path: join(dir, 'gone') },
      ]),
    new RegExp(`sandbox path ${join(dir, 'gone')} does not exist`),
  );
  assert.equal(openFds(), before);
  // A path through a file: its own error, with the path and what it means.
  writeFileSync(join(dir, 'file'), '');
  assert.throws(
    () => pinMounts([{ kind: 'write', path: join(dir, 'file', 'sub') }]),
    new RegExp(
      `sandbox path ${join(dir, 'file', 'sub')} cannot be opened \\(ENOTDIR\\): the backend is not started`,
    ),
  );
  assert.equal(openFds(), before);
  const pinned = pinMounts([{ kind: 'read', path: join(dir, 'a') }]);
  assert.equal(openFds(), before + 1);
  pinned.close();
  pinned.close();
  assert.equal(openFds(), before);
});
