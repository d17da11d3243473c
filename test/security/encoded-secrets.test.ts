// Attack: a backend holding a vault secret sends it encoded so that no literal form matches:
// base64 and base64url of a blob in which the secret starts at byte 0, 1 or 2 (each alignment
// gives different characters, and none ends where the secret does), and hex in lower and upper
// case; as values and as keys. Every blob reaches the host with the secret's part redacted, and
// the part of the encoding that only the secret determines appears nowhere.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { encodedBlobs } from '../fixtures/canary-leaks.js';
import { makeVault } from '../vault/make-vault.js';
import { assertNone, CANARY_SERVER, handshake, runSwitchboard } from './canary-host.js';

/**
 * What betrays the secret in an encoding where it starts at byte `offset`: the characters that
 * depend on its bytes alone, less one at each end (a shorter oracle than the redactor's own).
 */
function telltales(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const out = [bytes.toString('hex'), bytes.toString('hex').toUpperCase()];
  for (const offset of [0, 1, 2]) {
    const blob = Buffer.concat([Buffer.alloc(offset, 0x41), bytes]);
    const first = Math.ceil((offset * 8) / 6) + 1;
    const last = Math.floor((blob.length * 8) / 6) - 1;
    for (const encoding of ['base64', 'base64url'] as const)
      out.push(blob.toString(encoding).slice(first, last));
  }
  return out;
}

test('a secret sent as base64 at any alignment, base64url or hex reaches neither the host, the log nor the audit file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-encoded-'));
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  const vault = makeVault(dir, { canary });
  const db = join(dir, 'trust.sqlite');
  const run = runSwitchboard(
    t,
    dir,
    {
      servers: {
        canary: { command: process.execPath, args: [CANARY_SERVER], secrets: { CANARY: 'canary' } },
      },
      vault: { file: vault.file, keyFile: vault.keyFile },
      audit: { path: db, values: true },
      bridge: { enabled: false },
    },
    db,
  );
  await handshake(run);
  const encoded = await run.request('tools/call', { name: 'encoded', arguments: {} });
  const log = await run.finish();

  const blobs = encodedBlobs(canary);
  const needles = [...blobs, ...telltales(canary)];
  // The oracle is sound: each blob does hold a telltale of its own.
  assert.ok(blobs.every((b) => telltales(canary).some((x) => b.includes(x))));
  const text = (encoded.result as { content: { text: string }[] }).content[0]!.text;
  assert.equal(text.split(' ').length, blobs.length);
  for (const piece of text.split(' ')) assert.match(piece, /\[REDACTED:canary\]/);
  assertNone(JSON.stringify(run.lines), needles, "the host's wire");
  assertNone(log, needles, "switchboard's log");
  assertNone(run.dbBytes(), needles, 'the audit database');
});
