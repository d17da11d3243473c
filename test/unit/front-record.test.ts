// Which URLs reach a running front, by the records fronts keep in the state directory: the same
// port (the scheme's default when none is written), and the same host or a loopback name the
// front holds; a record of a process that is gone counts for nothing and is removed.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isRunningFront, recordFront } from '../../src/front/front-record.js';

const env = () => ({ XDG_STATE_HOME: mkdtempSync(join(tmpdir(), 'sb-fronts-')) });

test('a loopback front answers for both loopback addresses at its port, nothing else', () => {
  const e = env();
  const forget = recordFront('http://127.0.0.1:8123/mcp', e);
  for (const url of ['http://127.0.0.1:8123/mcp', 'http://localhost:8123/x', 'http://[::1]:8123/mcp'])
    assert.equal(isRunningFront(url, e), true, url);
  for (const url of ['http://127.0.0.2:8123/mcp', 'http://127.0.0.1:8124/mcp', 'http://10.0.0.1:8123/mcp'])
    assert.equal(isRunningFront(url, e), false, url);
  forget();
  assert.equal(isRunningFront('http://127.0.0.1:8123/mcp', e), false, 'forgotten at close');
});

test('wildcard fronts hold what their bind holds; a default port is matched as written or not', () => {
  const e = env();
  recordFront('http://0.0.0.0:8125/mcp', e);
  assert.equal(isRunningFront('http://127.0.0.1:8125/mcp', e), true);
  assert.equal(isRunningFront('http://[::1]:8125/mcp', e), false, 'IPv4 only: [::1] may be anyone');
  assert.equal(isRunningFront('http://localhost:8125/mcp', e), false, 'localhost may resolve to [::1]');
  recordFront('http://[::]:8126/mcp', e);
  assert.equal(isRunningFront('http://[::1]:8126/mcp', e), true);
  assert.equal(isRunningFront('http://127.0.0.1:8126/mcp', e), true);
  recordFront('http://127.0.0.1:80/mcp', e);
  assert.equal(isRunningFront('http://localhost/mcp', e), true);
  assert.equal(isRunningFront('http://localhost:80/mcp', e), true);
});

test('a record of a process that is gone is not trusted, and is removed', () => {
  const e = env();
  const forget = recordFront('http://127.0.0.1:8127/mcp', e);
  forget();
  const dir = join(e.XDG_STATE_HOME, 'switchboard', 'http-fronts');
  const stale = join(dir, '2147483646-8127.json');
  writeFileSync(stale, JSON.stringify({ url: 'http://127.0.0.1:8127/mcp', pid: 2147483646 }));
  assert.equal(isRunningFront('http://127.0.0.1:8127/mcp', e), false);
  assert.equal(existsSync(stale), false);
});
