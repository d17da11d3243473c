// The config watcher: a change to the file is seen even while other files in its directory are
// written without pause (the debounce has a longest wait), an event that changes nothing is not a
// change, and an edit made as soon as the watch starts is one.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { watchConfigFile } from '../../src/cli/config-watch.js';
import { createLogger } from '../../src/log.js';
import { until } from '../support/poll.js';

test('a config change is seen while a file beside it is written without pause', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-config-watch-'));
  const config = join(dir, 'switchboard.yaml');
  writeFileSync(config, 'servers: {}\n');
  let changes = 0;
  const unwatch = watchConfigFile(config, () => changes++, createLogger('silent'));
  t.after(unwatch);
  let n = 0;
  const busy = setInterval(() => writeFileSync(join(dir, 'busy.log'), `line ${++n}\n`), 50);
  t.after(() => clearInterval(busy));
  writeFileSync(join(dir, 'busy.log'), 'first\n');
  writeFileSync(config, 'servers: {}\n');
  await new Promise((resolve) => setTimeout(resolve, 100));
  writeFileSync(config, 'servers: {}\nlog: { level: warn }\n');
  await until(() => (changes > 0 ? true : undefined), 'the config change, with the log still being written');
  clearInterval(busy);
  assert.equal(changes, 1, 'rewriting the same text is no change; the new text is one');
});

test('an edit made as soon as the watch starts is a change', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-config-watch-'));
  const config = join(dir, 'switchboard.yaml');
  writeFileSync(config, 'servers: {}\n');
  let changes = 0;
  t.after(watchConfigFile(config, () => changes++, createLogger('silent')));
  // Before any read the watch might make later: the text it starts from is the one before this.
  writeFileSync(config, 'servers: {}\nlog: { level: warn }\n');
  await until(() => (changes > 0 ? true : undefined), 'the change');
});
