// Threat and fault: sandbox paths given through symbolic links. A `write` path that is a link (a
// notes directory linked elsewhere, a home on another disk) must work through the link rather than
// fail the backend's start, and a link must not bring back what the sandbox hides: one to a parent
// of switchboard's state is warned about as that parent is, and its files stay out of reach.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { localTokenPath } from '../../src/front/http-auth.js';
import { CANARY, SNOOP, outsideTmp, scene } from './snoop.js';

test('a write path reached through a symbolic link takes writes through the link, and its backend starts', async (t) => {
  const real = outsideTmp(t, 'linked-real');
  const link = join(outsideTmp(t, 'link'), 'notes');
  symlinkSync(real, link);
  const { snoop } = await scene(t, {
    w: {
      command: process.execPath,
      args: [SNOOP, '--write', join(link, 'ok'), '--write', join(real, 'also')],
      sandbox: { write: [link] },
    },
  });
  const writes = (await snoop('w')).report['writes'] as Record<string, boolean>;
  assert.equal(writes[join(link, 'ok')], true, 'the write through the link went in');
  assert.equal(writes[join(real, 'also')], true, 'and so did one to where the link leads');
  assert.equal(readFileSync(join(real, 'ok'), 'utf8'), 'pwned\n', 'the write reached the host');
});

test("write paths that link to parents of switchboard's files and state are warned about, and those stay hidden", async (t) => {
  // The scenes' files (config, vault, key, trust database) are made in SNOOP's directory; the
  // state directory (the local token's) is $XDG_STATE_HOME/switchboard.
  // Where the backend may not write: a link in a directory it may write is not followed (below).
  const links = mkdtempSync(join(dirname(dirname(SNOOP)), 'links-'));
  t.after(() => rmSync(links, { recursive: true, force: true }));
  const [toFiles, toState] = [join(links, 'files'), join(links, 'state')];
  symlinkSync(dirname(SNOOP), toFiles);
  symlinkSync(dirname(dirname(localTokenPath())), toState);
  const { snoop, sb, log, files } = await scene(t, {
    w: {
      command: process.execPath,
      args: [
        SNOOP,
        ...['{{config}}', '{{vault}}', '{{key}}', '{{audit}}', localTokenPath()].flatMap((f) => [
          '--read',
          f,
        ]),
        '--write',
        '{{audit}}',
        '--write',
        '{{config}}',
        '--write',
        join(dirname(localTokenPath()), 'planted'),
      ],
      sandbox: { write: [toFiles, toState] },
    },
  });
  const { raw, report } = await snoop('w');
  for (const [file, got] of Object.entries(report['reads'] as Record<string, string>))
    assert.ok(got === '' || got.startsWith('failed:'), `read ${file}: ${got.slice(0, 80)}`);
  assert.deepEqual(Object.values(report['writes'] as object), [false, false, false], `wrote: ${raw}`);
  assert.ok(!raw.includes(CANARY));
  sb.flushAudit();
  assert.ok(!readFileSync(files.audit).includes('pwned'), 'the trust database is untouched');
  assert.ok(!readFileSync(files.config, 'utf8').includes('pwned'));
  assert.ok(!existsSync(join(dirname(localTokenPath()), 'planted')));
  const warned = log.lines().find((l) => /above switchboard's state/.test(String(l['msg'])));
  assert.deepEqual(
    warned?.['write'],
    [toFiles, toState],
    "the links to the parents of switchboard's files and of its state directory are warned about",
  );
});

test('a link in a directory the backend may write is not followed: the backend is not started, and the log says why', async (t) => {
  // The backend may write `work`, so it could have made `work/sub` a link to what it wants.
  const work = outsideTmp(t, 'work');
  const target = outsideTmp(t, 'target');
  const sub = join(work, 'sub');
  symlinkSync(target, sub);
  const { snoop, log } = await scene(t, {
    w: {
      command: process.execPath,
      args: [SNOOP, '--write', join(sub, 'planted')],
      // A write path not made yet under the link is not made where the link leads either.
      sandbox: { write: [work, sub, join(sub, 'data')] },
    },
  });
  await assert.rejects(snoop('w'), /Unknown tool/);
  assert.match(
    log.text(),
    /sandbox path [^"]*\/sub goes through [^"]*\/sub, a symbolic link in [^"]*\/work-[^"]*, which a backend may write/,
  );
  assert.ok(!existsSync(join(target, 'planted')));
  assert.ok(!existsSync(join(target, 'data')), 'nothing was made through the link');
});
