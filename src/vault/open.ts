// Opens the vault a configuration names (its file, unlocked by a key file or a passphrase from the
// environment, plus the inline `vault.keys`), and hands each backend only the secrets it declares.
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { resolveSecretRefs } from '../config/env-refs.js';
import { readVault, VaultError, type KeySource } from './vault-file.js';
import { Vault } from './vault.js';
import { canonicalJson } from '../encoding/canonical-json.js';

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

/**
 * The configuration each backend is started with: a stdio backend's `secrets` added to its `env`,
 * `${secret:NAME}` in an HTTP backend's headers replaced, and the escape `$${secret:` turned into
 * the literal text `${secret:` everywhere (see env-refs.ts: text from the environment arrives
 * escaped, so only the file's own references name secrets). Every name must be a plain secret of
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
    const resolved = resolveEntry(b, `servers.${name}`, lookup, (path) =>
      problems.push(
        `${path}: \${secret:…} is resolved only in a remote server's headers; give a stdio server its secrets under servers.${name}.secrets`,
      ),
    );
    if (!('command' in resolved) || Object.keys(resolved.secrets).length === 0) {
      servers[name] = resolved;
      continue;
    }
    const env = { ...resolved.env };
    for (const [variable, secret] of Object.entries(resolved.secrets)) {
      env[variable] = lookup(`servers.${name}.secrets.${variable}`, secret);
    }
    servers[name] = { ...resolved, env };
  }
  if (problems.length) throw new VaultError('vault_secret_missing', problems.join('\n'));
  return { ...config, servers };
}

/**
 * A server entry with its references resolved (in a remote server's headers) or reported (anywhere
 * else), and its escapes unescaped; the very object when it has neither.
 */
function resolveEntry<T>(
  entry: T,
  path: string,
  lookup: (path: string, name: string) => string,
  misplaced: (path: string) => void,
): T {
  const walk = (value: unknown, at: string, inHeaders: boolean): unknown => {
    if (typeof value === 'string') {
      const { value: out, refs } = resolveSecretRefs(
        value,
        inHeaders ? (secret) => lookup(at, secret) : undefined,
      );
      if (refs && !inHeaders) misplaced(at);
      return out;
    }
    if (Array.isArray(value)) {
      const items = value.map((v, i) => walk(v, `${at}[${i}]`, inHeaders));
      return items.some((v, i) => v !== value[i]) ? items : value;
    }
    if (value && typeof value === 'object') {
      let changed = false;
      const entries = Object.entries(value).map(([k, v]) => {
        const w = walk(v, `${at}.${k}`, inHeaders || (at === path && k === 'headers'));
        changed ||= w !== v;
        return [k, w] as const;
      });
      return changed ? Object.fromEntries(entries) : value;
    }
    return value;
  };
  return walk(entry, path, false) as T;
}

/**
 * withSecrets for a reload: the running vault resolves the new entries (it is opened only at
 * start). A name it lacks, when the vault section changed too, is said to need a restart rather
 * than to be missing: it may well be in the vault the new section names.
 */
export function reloadSecrets(next: Config, running: Config, vault: Vault): Config {
  try {
    return withSecrets(next, vault);
  } catch (err) {
    if (canonicalJson(next.vault) === canonicalJson(running.vault)) throw err;
    throw new Error(
      `${(err as Error).message}\nThe vault section changed, and the vault is opened only at start: restart switchboard to use it`,
      { cause: err },
    );
  }
}
