// How a sandboxed backend's view follows symbolic links: each link on a bound path's way, its
// target walked the same way, is followed only when no backend could have made it (it lies outside
// every write path and cache); the bridge socket likewise, and only while it is a socket.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { sandboxView, type ViewInput } from '../../src/sandbox/sandbox-view.js';

function scratch(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-links-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function view(dir: string, over: Partial<ViewInput>): ReturnType<typeof sandboxView> {
  return sandboxView({
    protect: { dirs: [], files: [] },
    read: [],
    write: [],
    hide: [],
    cwd: dir,
    env: { HOME: join(dir, 'home') },
    sockets: [],
    command: '/bin/sh',
    othersWrite: [],
    ...over,
  });
}

const writes = (mounts: ReturnType<typeof sandboxView>) =>
  mounts.flatMap((m) => (m.kind === 'write' ? [m.path] : []));

test("a user's link outside what backends write is followed to where it leads", (t) => {
  const dir = scratch(t);
  mkdirSync(join(dir, 'disk', 'notes'), { recursive: true });
  symlinkSync(join(dir, 'disk', 'notes'), join(dir, 'notes'));
  // A relative link, and one through another link.
  symlinkSync('notes', join(dir, 'again'));
  assert.deepEqual(writes(view(dir, { write: [join(dir, 'notes'), join(dir, 'again')] })), [
    join(dir, 'disk', 'notes'),
    join(dir, 'disk', 'notes'),
  ]);
});

test('a chain whose later link lies in a write path is refused, not only its first', (t) => {
  const dir = scratch(t);
  // The user's own link leads into the backend's work directory, where the backend made the next.
  mkdirSync(join(dir, 'work', 'proj'), { recursive: true });
  mkdirSync(join(dir, 'secret'));
  symlinkSync(join(dir, 'work', 'proj', 'notes'), join(dir, 'notes'));
  symlinkSync('../../secret', join(dir, 'work', 'proj', 'notes'));
  assert.throws(
    () => view(dir, { write: [join(dir, 'work'), join(dir, 'notes')] }),
    /goes through .*work\/proj\/notes, a symbolic link in .*work\/proj, which a backend may write/,
  );
});

test("a link in another backend's write path is not followed for this one", (t) => {
  const dir = scratch(t);
  mkdirSync(join(dir, 'shared'));
  mkdirSync(join(dir, 'secret'));
  symlinkSync('../secret', join(dir, 'shared', 'b'));
  assert.throws(
    () => view(dir, { write: [join(dir, 'shared', 'b')], othersWrite: [join(dir, 'shared')] }),
    /which a backend may write/,
  );
});

test('the bridge socket is bound only when it is a socket reached past no link a backend could make', async (t) => {
  const dir = scratch(t);
  mkdirSync(join(dir, 'run'));
  const path = join(dir, 'run', 'bridge.sock');
  const server = createServer().listen(path);
  await new Promise((resolve) => server.once('listening', resolve));
  t.after(() => server.close());
  assert.equal(writes(view(dir, { sockets: [path] })).at(-1), path, 'the socket itself');
  // Its directory in a write path: a backend could have replaced it with a link to anything.
  mkdirSync(join(dir, 'work'));
  mkdirSync(join(dir, 'state'));
  symlinkSync(join(dir, 'state'), join(dir, 'work', 'bridge.sock'));
  assert.throws(
    () => view(dir, { write: [join(dir, 'work')], sockets: [join(dir, 'work', 'bridge.sock')] }),
    /which a backend may write/,
  );
  writeFileSync(join(dir, 'run', 'not-a-socket'), '');
  assert.throws(() => view(dir, { sockets: [join(dir, 'run', 'not-a-socket')] }), /is not a socket/);
});
