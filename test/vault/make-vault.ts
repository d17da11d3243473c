// Test helper: a vault file with the given plain secrets, unlocked by a fresh key file, in `dir`.
import { join } from 'node:path';
import { createKeyFile, newKdf, writeVault, type VaultEntry } from '../../src/vault/vault-file.js';

export interface MadeVault {
  file: string;
  keyFile: string;
}

export function makeVault(
  dir: string,
  secrets: Record<string, string>,
  keys: readonly Omit<VaultEntry, 'created'>[] = [],
): MadeVault {
  const file = join(dir, 'vault.json');
  const keyFile = join(dir, 'vault.key');
  createKeyFile(keyFile);
  const created = new Date().toISOString();
  const entries: VaultEntry[] = [
    ...Object.entries(secrets).map(([name, value]) => ({
      name,
      kind: 'secret' as const,
      created,
      value: Buffer.from(value, 'utf8'),
    })),
    ...keys.map((k) => ({ ...k, created })),
  ];
  const source = { keyFile };
  writeVault(file, source, newKdf(source), entries);
  return { file, keyFile };
}
