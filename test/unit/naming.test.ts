// Exposed names and URIs: a pure function of config, within 64 characters, reversible for URIs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  exposedName,
  exposedUri,
  namespacesOf,
  shorten,
  splitUri,
  MAX_NAME_LENGTH,
} from '../../src/catalog/naming.js';
import { templateMatches } from '../../src/catalog/uri-template-match.js';
import { Config } from '../../src/config/schema.js';

const server = { command: 'x' };

test('conditional mode prefixes only when more than one backend is enabled', () => {
  const one = namespacesOf(Config.parse({ servers: { a: server, b: { ...server, disabled: true } } }));
  assert.equal(exposedName(one.get('a')!, 'echo'), 'echo');
  const two = namespacesOf(Config.parse({ servers: { a: server, b: server } }));
  assert.equal(exposedName(two.get('a')!, 'echo'), 'a_echo');
});

test('per-backend mode, prefix and separator are honoured', () => {
  const ns = namespacesOf(
    Config.parse({
      namespacing: { separator: '__' },
      servers: { mem: { ...server, prefix: 'm' }, raw: { ...server, namespacing: 'never' } },
    }),
  );
  assert.equal(exposedName(ns.get('mem')!, 'get'), 'm__get');
  assert.equal(exposedName(ns.get('raw')!, 'get'), 'get');
});

test('adding a backend does not rename the tools of the others', () => {
  const before = namespacesOf(Config.parse({ servers: { a: server, b: server } }));
  const after = namespacesOf(Config.parse({ servers: { a: server, b: server, c: server } }));
  assert.equal(exposedName(before.get('a')!, 't'), exposedName(after.get('a')!, 't'));
});

test('long names are shortened deterministically to the limit, and distinct names stay distinct', () => {
  const a = shorten(`p_${'x'.repeat(80)}_one`);
  const b = shorten(`p_${'x'.repeat(80)}_two`);
  assert.equal(a.length, MAX_NAME_LENGTH);
  assert.equal(a, shorten(`p_${'x'.repeat(80)}_one`));
  assert.notEqual(a, b);
  assert.match(a, /^[A-Za-z0-9_.-]+$/);
});

test('namespaced URIs split back into the prefix and the original URI', () => {
  const ns = namespacesOf(Config.parse({ servers: { My_Notes: server, other: server } }));
  const uri = exposedUri(ns.get('My_Notes')!, 'file:///a/b?c=d');
  assert.equal(uri, 'my-notes+file:///a/b?c=d');
  assert.deepEqual(splitUri(uri), { uriPrefix: 'my-notes', uri: 'file:///a/b?c=d' });
  assert.equal(splitUri('file:///plain'), undefined);
});

test('URI templates match the URIs they describe, and only those', () => {
  assert.ok(templateMatches('notes://{title}', 'notes://welcome'));
  assert.ok(!templateMatches('notes://{title}', 'notes://a/b'));
  assert.ok(templateMatches('file:///{+path}', 'file:///a/b/c'));
  assert.ok(!templateMatches('notes://{title}', 'other://welcome'));
});
