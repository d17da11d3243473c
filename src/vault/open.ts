// Opens the vault a configuration names (its file, unlocked by a key file or a passphrase from the
// environment, plus the inline `vault.keys`), and hands each backend only the secrets it declares.
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { readVault, VaultError, type KeySource } from './vault-file.js';
import { Vault } from './vault.js';

export function defaultVaultPath(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(state, 'switchboard', 'vault.json');
}

/** How the config unlocks the vault file; undefined when it uses no vault file. */
export function keySourceOf(vault: Config['vault'], env: NodeJS.ProcessEnv): KeySource | undefined {
  if (vault.keyFile !== undefined && vault.passphraseEnv !== undefined) {
    throw new VaultError('vault_key_source', 'vault: set keyFile or passphraseEnv, not both');
  }
  if (vault.keyFile !== undefined) return { keyFile: vault.keyFile };
  if (vault.passphraseEnv !== undefined) {
    const passphrase = env[vault.passphraseEnv];
    if (passphrase === undefined || passphrase === '') {
      throw new VaultError(
        'vault_key_source',
        `vault.passphraseEnv names ${vault.passphraseEnv}, which is not set in the environment`,
      );
    }
    return { passphrase, label: vault.passphraseEnv };
  }
  return undefined;
}

/** The vault of a configuration: its file's entries (when it has one) and its inline keys. */
export function openVault(config: Config, env: NodeJS.ProcessEnv = process.env): Vault {
  const vault = Vault.empty();
  const source = keySourceOf(config.vault, env);
  if (source) {
    const path = config.vault.file ?? defaultVaultPath(env);
    vault.addEntries(readVault(path, source).entries.values(), `vault file ${path}`);
  } else if (config.vault.file !== undefined) {
    throw new VaultError(
      'vault_key_source',
      `vault.file is ${config.vault.file}, but neither vault.keyFile nor vault.passphraseEnv says how to unlock it`,
    );
  }
  vault.addInline(config.vault.keys, 'vault.keys');
  return vault;
}

const SECRET_REF = /\$\{secret:([^}]*)\}/g;

/**
 * The configuration each backend is started with: a stdio backend's `secrets` added to its `env`,
 * `${secret:NAME}` in an HTTP backend's headers replaced. Every name must be a plain secret of
 * the vault; the first that is not fails the start, naming the key that refers to it.
 */
export function withSecrets(config: Config, vault: Vault): Config {
  const problems: string[] = [];
  const lookup = (path: string, name: string): string => {
    const value = vault.secrets.get(name);
    if (value !== undefined) return value;
    problems.push(
      vault.keys.has(name)
        ? `${path}: "${name}" is a vault key; only plain secrets can be handed to a backend`
        : `${path}: no secret "${name}" in the vault (add it with switchboard vault set ${name})`,
    );
    return '';
  };
  const servers: Config['servers'] = {};
  for (const [name, b] of Object.entries(config.servers)) {
    // A disabled entry is never started: what it names need not exist yet.
    if (b.disabled) {
      servers[name] = b;
      continue;
    }
    for (const path of secretRefsOutsideHeaders(b, `servers.${name}`)) {
      problems.push(
        `${path}: \${secret:…} is resolved only in a remote server's headers; give a stdio server its secrets under servers.${name}.secrets`,
      );
    }
    if ('command' in b) {
      const names = Object.entries(b.secrets);
      if (names.length === 0) {
        servers[name] = b;
        continue;
      }
      const env = { ...b.env };
      for (const [variable, secret] of names) {
        env[variable] = lookup(`servers.${name}.secrets.${variable}`, secret);
      }
      servers[name] = { ...b, env };
    } else {
      const refs = Object.values(b.headers).some((v) => v.includes('${secret:'));
      if (!refs) {
        servers[name] = b;
        continue;
      }
      const headers: Record<string, string> = {};
      for (const [h, v] of Object.entries(b.headers)) {
        headers[h] = v.replace(SECRET_REF, (_, secret: string) =>
          lookup(`servers.${name}.headers.${h}`, secret),
        );
      }
      servers[name] = { ...b, headers };
    }
  }
  if (problems.length) throw new VaultError('vault_secret_missing', problems.join('\n'));
  return { ...config, servers };
}

/** Paths of strings in a server entry, outside its headers, that refer to a vault secret. */
function secretRefsOutsideHeaders(value: unknown, path: string): string[] {
  if (typeof value === 'string') return value.includes('${secret:') ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => secretRefsOutsideHeaders(v, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) =>
      k === 'headers' ? [] : secretRefsOutsideHeaders(v, `${path}.${k}`),
    );
  }
  return [];
}
