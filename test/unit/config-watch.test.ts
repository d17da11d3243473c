// The config watcher: a change to the file is seen even while other files in its directory are
// written without pause (the debounce has a longest wait), an event that changes nothing is not a
// change, an edit made as soon as the watch starts is one, and a text still being written is not
// one until it holds still.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEBOUNCE_MS, watchConfigFile } from '../../src/cli/config-watch.js';
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

test('a file written in two parts with a pause is one change, to the whole text', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-config-watch-'));
  const config = join(dir, 'switchboard.yaml');
  writeFileSync(config, 'servers: {}\n');
  const seen: string[] = [];
  t.after(watchConfigFile(config, () => seen.push(readFileSync(config, 'utf8')), createLogger('silent')));
  // As a redirect that a slow command fills leaves it: a part that parses, then (past the
  // debounce) the rest.
  const whole = 'servers: {}\npolicy:\n  rules: [{ name: no, tools: [x], effect: deny }]\n';
  writeFileSync(config, 'servers: {}\n# more to come\n');
  await new Promise((resolve) => setTimeout(resolve, DEBOUNCE_MS * 1.5));
  writeFileSync(config, whole);
  await until(() => (seen.length > 0 ? true : undefined), 'the change');
  await new Promise((resolve) => setTimeout(resolve, DEBOUNCE_MS * 3));
  assert.deepEqual(seen, [whole]);
});
