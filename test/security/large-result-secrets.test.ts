// Threat: credential leakage in bulk. A backend answers a result of about a megabyte in which
// hundreds of vault secrets sit at random places, as they are and encoded (base64 at every
// alignment, hex): however the redaction pass skips through text, none of them reaches the host.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connectStdio } from '../support/mcp-clients.js';
import { makeVault } from '../vault/make-vault.js';

const BULK_ECHO = fileURLToPath(new URL('../fixtures/bulk-echo-server.js', import.meta.url));
const SECRETS = 300;

test('hundreds of secrets scattered through a megabyte result are all redacted', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bulk-secrets-'));
  const secrets: Record<string, string> = {};
  for (let i = 0; i < SECRETS; i++) secrets[`s${i}`] = randomBytes(8 + (i % 24)).toString('base64url');
  const vault = makeVault(dir, secrets);
  const { client } = await connectStdio(t, {
    servers: { bulk: { command: process.execPath, args: [BULK_ECHO] } },
    vault: { file: vault.file, keyFile: vault.keyFile },
  });

  // Filler of the secrets' own alphabet, so that no skip is given away by a foreign character.
  const filler = () => randomBytes(1 + (randomBytes(2).readUInt16BE() % 4000)).toString('base64url');
  const values = Object.values(secrets);
  const forms = (s: string) => {
    const b = Buffer.from(s);
    return [
      s,
      b.toString('hex'),
      // Preceded by 0, 1 and 2 bytes: the secret's base64 at each alignment.
      ...[0, 1, 2].map((k) => Buffer.concat([randomBytes(k), b, randomBytes(2)]).toString('base64')),
    ];
  };
  const parts: string[] = [];
  for (const value of values) for (const form of forms(value)) parts.push(filler(), form);
  parts.push(filler());
  const text = parts.join(' ');
  assert.ok(text.length > 1_000_000, `the result is ${text.length} characters`);

  const result = await client.callTool({ name: 'echo', arguments: { text } }, { timeout: 120_000 });
  const wire = JSON.stringify(result);
  for (const [name, value] of Object.entries(secrets)) {
    const b = Buffer.from(value);
    for (const needle of [value, b.toString('hex'), b.toString('base64url').slice(1, -2)])
      assert.ok(!wire.includes(needle), `${name} reached the host as ${needle}`);
  }
  const replaced = wire.match(/\[REDACTED:s\d+\]/g) ?? [];
  assert.ok(replaced.length >= SECRETS * 5, `${replaced.length} replacements`);
  for (let i = 0; i < SECRETS; i++) assert.ok(wire.includes(`[REDACTED:s${i}]`), `s${i} was never replaced`);
});
