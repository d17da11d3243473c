// docs/errors.md is what the error catalogue renders: the documented codes are the ones sent.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { renderErrorsDoc } from '../../src/errors/catalogue-doc.js';

// dist/test/unit/ → the repository root.
const committed = new URL('../../../docs/errors.md', import.meta.url);

test('docs/errors.md is up to date with src/errors/catalogue.ts', async () => {
  const text = await readFile(committed, 'utf8');
  assert.ok(
    text === renderErrorsDoc(),
    'docs/errors.md is out of date with src/errors/catalogue.ts; regenerate it with:  npm run docs:errors',
  );
});
