// What a 2026-07-28 request's `_meta` envelope lacks, said so the caller can fix it: a field left
// out is required, one of the wrong type says what it must be.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { envelopeProblem } from '../../src/protocol/envelope.js';

const VERSION = 'io.modelcontextprotocol/protocolVersion';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';

test('each missing or mistyped envelope field is named, with what it must be', () => {
  assert.equal(envelopeProblem(undefined), 'params._meta is required');
  assert.equal(envelopeProblem({ _meta: { [CAPS]: {} } }), `_meta["${VERSION}"] is required`);
  assert.equal(
    envelopeProblem({ _meta: { [VERSION]: 5, [CAPS]: {} } }),
    `_meta["${VERSION}"] must be a string (a version such as 2026-07-28)`,
  );
  assert.match(
    envelopeProblem({ _meta: { [VERSION]: '2026-07-28', [CAPS]: [] } }) ?? '',
    /an object; \{\} declares none/,
  );
  assert.equal(envelopeProblem({ _meta: { [VERSION]: '2026-07-28', [CAPS]: {} } }), undefined);
});
