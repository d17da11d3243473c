// What an A2A task's parts count for against the message limit: about their size as JSON on the
// wire, raw bytes as the base64 they travel as (not the object a byte array stringifies to).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Part } from '@a2a-js/sdk';
import { dataPart, partsBytes, textPart } from '../../src/a2a/parts.js';

const raw = (bytes: Buffer): Part => ({
  content: { $case: 'raw', value: bytes },
  metadata: undefined,
  filename: 'image.png',
  mediaType: 'image/png',
});

test('raw bytes count as their base64, whether a Uint8Array or a Buffer', () => {
  // A client may hand over a plain byte array where its types say Buffer.
  for (const bytes of [Buffer.alloc(30_000), new Uint8Array(30_000) as Buffer]) {
    const size = partsBytes([raw(bytes)]);
    assert.ok(size >= 40_000 && size < 40_200, `${size}`);
  }
});

test('text and data count as their JSON', () => {
  const parts = [textPart('t'.repeat(5000)), dataPart({ n: 'd'.repeat(5000) })];
  assert.equal(partsBytes(parts), JSON.stringify(parts).length);
});
