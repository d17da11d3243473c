// The `payload-redaction` curve: a 1 MiB echo over stdio with redaction configured, each point
// against the same direct echo, so what hiding costs per byte of a large result reads against the
// plain `payload` curve: a thousand vault secrets (none in the text, or one in every KiB), seven
// common patterns over prose with no match, with an address in every KiB, and over hex.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createKeyFile, newKdf, writeVault } from '../../src/vault/vault-file.js';
import { echoOf, type Point } from './points.js';

const MIB = 1024 * 1024;
const SECRETS = 1000;

/** What operators hide besides their vault: keys of four services, a PEM header, an SSN, addresses. */
const PATTERNS = [
  'sk-[A-Za-z0-9]{20,}',
  'AKIA[0-9A-Z]{16}',
  'ghp_[A-Za-z0-9]{36}',
  'xox[baprs]-[A-Za-z0-9-]{10,}',
  '-----BEGIN [A-Z ]*PRIVATE KEY-----',
  '\\b\\d{3}-\\d{2}-\\d{4}\\b',
  '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}',
];
/** As long as `[REDACTED:pattern-7]`, so the echo comes back as long as it went. */
const ADDRESS = 'anna.lee@example.com';

const WORDS = 'the quick brown fox jumps over a lazy dog while notes and paths/to/files.txt pile up'.split(
  ' ',
);

/** About `bytes` of prose, with `every(i)` put in after each KiB. */
function prose(bytes: number, every: (i: number) => string = () => ''): string {
  const parts: string[] = [];
  let length = 0;
  let kib = 0;
  for (let i = 0; length < bytes; i++) {
    const word = WORDS[i % WORDS.length]!;
    parts.push(word);
    length += word.length + 1;
    if (length >= (kib + 1) * 1024) parts.push(every(kib++));
  }
  return parts.filter(Boolean).join(' ').slice(0, bytes);
}

/** A vault of SECRETS secrets named s0000…, each as long as `[REDACTED:s0000]`. */
function vaultOf(): { values: string[]; section: () => Record<string, unknown> } {
  const values = Array.from({ length: SECRETS }, () => randomBytes(12).toString('base64url'));
  return {
    values,
    section: () => {
      const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-vault-'));
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      const file = join(dir, 'vault.json');
      const keyFile = join(dir, 'vault.key');
      createKeyFile(keyFile);
      const created = new Date().toISOString();
      const entries = values.map((value, i) => ({
        name: `s${String(i).padStart(4, '0')}`,
        kind: 'secret' as const,
        created,
        value: Buffer.from(value),
      }));
      writeVault(file, { keyFile }, newKdf({ keyFile }), entries);
      return { vault: { file, keyFile } };
    },
  };
}

export function redactionPoints(): Point[] {
  const vault = vaultOf();
  const patterns = () => ({ redaction: { patterns: PATTERNS } });
  const point = (label: string, text: string, extra: () => Record<string, unknown>): Point => ({
    ...echoOf(text, label, 'stdio', extra),
    curve: 'payload redaction (1 MiB)',
  });
  return [
    point('nothing configured', prose(MIB), () => ({})),
    point(`${SECRETS} secrets, none in it`, prose(MIB), vault.section),
    point(
      `${SECRETS} secrets, one per KiB`,
      prose(MIB, (i) => vault.values[i % SECRETS]!),
      vault.section,
    ),
    point('7 patterns, no match', prose(MIB), patterns),
    point(
      '7 patterns, an address per KiB',
      prose(MIB, () => ADDRESS),
      patterns,
    ),
    point('7 patterns, hex', randomBytes(MIB / 2).toString('hex'), patterns),
  ];
}
