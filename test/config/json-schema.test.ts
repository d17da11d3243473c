// The committed schema/switchboard.schema.json matches the zod schema it is generated from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { configJsonSchema, renderConfigJsonSchema } from '../../src/config/json-schema.js';

// dist/test/config/ → the repository root.
const committed = new URL('../../../schema/switchboard.schema.json', import.meta.url);

test('schema/switchboard.schema.json is up to date with src/config/schema.ts', async () => {
  const text = await readFile(committed, 'utf8');
  assert.ok(
    text === renderConfigJsonSchema(),
    'schema/switchboard.schema.json is out of date with src/config/schema.ts; regenerate it with:\n' +
      '  npx tsc -p . && node dist/src/config/json-schema.js > schema/switchboard.schema.json',
  );
});

test('describes the input side: keys with defaults are optional, required ones are required', () => {
  const schema = configJsonSchema() as {
    required?: string[];
    properties: {
      servers: {
        additionalProperties: { anyOf: { required?: string[]; oneOf?: { required: string[] }[] }[] };
      };
    };
  };
  assert.equal(schema.required, undefined);
  const [stdio, remote] = schema.properties.servers.additionalProperties.anyOf;
  assert.deepEqual(stdio?.required, ['command']);
  assert.equal(remote?.required, undefined);
  assert.deepEqual(
    remote?.oneOf,
    [{ required: ['url'] }, { required: ['urls'] }],
    'exactly one of url and urls',
  );
});
