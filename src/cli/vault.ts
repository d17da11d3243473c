// `switchboard vault init|set|list|rm|rotate`: the operator's side of the vault file. Values are
// read from stdin or generated, never from the command line (shell history, process lists), and
// nothing prints a secret or a private key: `list` shows names and kinds, `set --generate`
// prints only an asymmetric key's public half.
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { loadConfig } from '../config/load.js';
import { BACKEND_NAME } from '../config/schema.js';
import { defaultVaultPath, keySourceOf } from '../vault/open.js';
import {
  createKeyFile,
  newKdf,
  readVault,
  writeVault,
  type EntryKind,
  type KeySource,
  type VaultEntry,
} from '../vault/vault-file.js';
import { processIo, type CommandIo, parseCommand } from './io.js';

export const VAULT_USAGE = `Usage: switchboard vault <init|set|list|rm|rotate> [options]

  init                          Create an empty vault file (and, with --key-file, a new key file)
  set <name> --from-stdin       Store stdin (one trailing newline dropped) as a plain secret
  set <name> --generate KIND    Generate a key: ed25519, ecdsa-p256, hmac (hmac-sha256), aes (aes-256-gcm)
  set <name> --from-stdin --kind KIND
                                Import a key: PKCS#8 PEM for ed25519/ecdsa-p256, base64 for hmac/aes
  list                          Names and kinds of the entries (never their values)
  rm <name>                     Remove an entry
  rotate --new-key-file FILE | --new-passphrase-env VAR
                                Re-encrypt the vault under a new key (init makes a new key file)

Options:
  --vault FILE            the vault file (default: vault.file of --config, else
                          $XDG_STATE_HOME/switchboard/vault.json)
  --key-file FILE         unlock with this key file (32 random bytes, mode 0600)
  --passphrase-env VAR    unlock with the passphrase in environment variable VAR (scrypt)
  --config FILE           take vault.file, vault.keyFile and vault.passphraseEnv from this config
  --force                 set: replace an existing entry`;

const KIND_ALIASES: Record<string, Exclude<EntryKind, 'secret'>> = {
  ed25519: 'ed25519',
  'ecdsa-p256': 'ecdsa-p256',
  hmac: 'hmac-sha256',
  'hmac-sha256': 'hmac-sha256',
  aes: 'aes-256-gcm',
  'aes-256-gcm': 'aes-256-gcm',
};

class UsageError extends Error {}

export interface VaultCommandIo extends CommandIo {
  stdin?: Readable;
  env?: NodeJS.ProcessEnv;
}

export async function runVault(argv: string[], io: VaultCommandIo = processIo): Promise<number> {
  const parsed = parseCommand(
    'vault',
    VAULT_USAGE,
    argv,
    {
      vault: { type: 'string' },
      'key-file': { type: 'string' },
      'passphrase-env': { type: 'string' },
      config: { type: 'string', short: 'c' },
      'from-stdin': { type: 'boolean' },
      generate: { type: 'string' },
      kind: { type: 'string' },
      force: { type: 'boolean' },
      'new-key-file': { type: 'string' },
      'new-passphrase-env': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    io,
  );
  if (!parsed) return 2;
  const { values: v, positionals } = parsed;
  const [sub, name] = positionals;
  if (v.help || !sub) {
    (v.help ? io.out : io.err)(VAULT_USAGE);
    return v.help ? 0 : 2;
  }
  const env = io.env ?? process.env;
  try {
    let file = v.vault;
    let source: KeySource | undefined;
    if (v['key-file'] !== undefined) source = { keyFile: v['key-file'] };
    if (v['passphrase-env'] !== undefined) {
      if (source) throw new UsageError('give --key-file or --passphrase-env, not both');
      source = passphraseFrom(v['passphrase-env'], env);
    }
    if (v.config !== undefined) {
      const { config } = await loadConfig(v.config, { env });
      file ??= config.vault.file;
      source ??= keySourceOf(config.vault, env);
    }
    file ??= defaultVaultPath(env);
    if (!source)
      throw new UsageError(
        v.config !== undefined
          ? `${v.config} says nothing of how the vault is unlocked (vault.keyFile or vault.passphraseEnv): add one, or give --key-file or --passphrase-env`
          : 'say how the vault is unlocked: --key-file, --passphrase-env or --config',
      );

    switch (sub) {
      case 'init': {
        if (existsSync(file)) throw new UsageError(`${file} already exists; refusing to overwrite a vault`);
        if ('keyFile' in source && !existsSync(source.keyFile)) {
          createKeyFile(source.keyFile);
          io.err(
            `created key file ${source.keyFile} (32 random bytes, mode 0600): keep it apart from the vault`,
          );
        }
        writeVault(file, source, newKdf(source), []);
        io.err(`created vault ${file}`);
        return 0;
      }
      case 'list': {
        const { entries } = readVault(file, source);
        for (const e of entries.values()) io.out(`${e.name}\t${e.kind}\t${e.created}`);
        return 0;
      }
      case 'set': {
        if (!name || !BACKEND_NAME.test(name))
          throw new UsageError('set needs a name of letters, digits, _ . - (at most 64)');
        const { kdf, entries } = readVault(file, source);
        if (entries.has(name) && !v.force)
          throw new UsageError(`"${name}" already exists in ${file}; add --force to replace it`);
        const made = await makeEntry(name, v, io.stdin ?? process.stdin);
        const next = new Map(entries);
        next.set(name, made.entry);
        writeVault(file, source, kdf, next.values());
        io.err(`stored ${made.entry.kind} "${name}" in ${file}`);
        if (made.publicKey) io.out(made.publicKey.trimEnd());
        return 0;
      }
      case 'rm': {
        if (!name) throw new UsageError('rm needs the name of an entry');
        const { kdf, entries } = readVault(file, source);
        if (!entries.has(name)) {
          io.err(`switchboard vault: no entry "${name}" in ${file}`);
          return 1;
        }
        const next = new Map(entries);
        next.delete(name);
        writeVault(file, source, kdf, next.values());
        io.err(`removed "${name}" from ${file}`);
        return 0;
      }
      case 'rotate': {
        const { entries } = readVault(file, source);
        let target: KeySource;
        if (v['new-key-file'] !== undefined) {
          if (!existsSync(v['new-key-file'])) createKeyFile(v['new-key-file']);
          target = { keyFile: v['new-key-file'] };
        } else if (v['new-passphrase-env'] !== undefined) {
          target = passphraseFrom(v['new-passphrase-env'], env);
        } else throw new UsageError('rotate needs --new-key-file FILE or --new-passphrase-env VAR');
        writeVault(file, target, newKdf(target), entries.values());
        io.err(
          `re-encrypted ${entries.size} entries of ${file} under the new key; update vault.keyFile / vault.passphraseEnv`,
        );
        return 0;
      }
      default:
        throw new UsageError(`unknown subcommand "${sub}"\n\n${VAULT_USAGE}`);
    }
  } catch (err) {
    io.err(`switchboard vault: ${(err as Error).message}`);
    return err instanceof UsageError ? 2 : 1;
  }
}

function passphraseFrom(variable: string, env: NodeJS.ProcessEnv): KeySource {
  const passphrase = env[variable];
  if (!passphrase) throw new UsageError(`environment variable ${variable} (the passphrase) is not set`);
  return { passphrase, label: variable };
}

interface SetFlags {
  'from-stdin'?: boolean | undefined;
  generate?: string | undefined;
  kind?: string | undefined;
}

async function makeEntry(
  name: string,
  v: SetFlags,
  stdin: Readable,
): Promise<{ entry: VaultEntry; publicKey?: string }> {
  const created = new Date().toISOString();
  if (v.generate !== undefined) {
    if (v['from-stdin']) throw new UsageError('give --generate or --from-stdin, not both');
    const kind = KIND_ALIASES[v.generate];
    if (!kind) throw new UsageError(`--generate takes ed25519, ecdsa-p256, hmac or aes, not "${v.generate}"`);
    if (kind === 'hmac-sha256' || kind === 'aes-256-gcm') {
      return { entry: { name, kind, created, value: randomBytes(32) } };
    }
    const { privateKey, publicKey } =
      kind === 'ed25519'
        ? generateKeyPairSync('ed25519')
        : generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    return {
      entry: { name, kind, created, value: privateKey.export({ type: 'pkcs8', format: 'der' }) },
      publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    };
  }
  if (!v['from-stdin']) throw new UsageError('set needs --from-stdin or --generate KIND');
  const text = (await readAll(stdin)).replace(/\r?\n$/, '');
  if (text === '') throw new UsageError('stdin was empty');
  if (v.kind === undefined || v.kind === 'secret') {
    return { entry: { name, kind: 'secret', created, value: Buffer.from(text, 'utf8') } };
  }
  const kind = KIND_ALIASES[v.kind];
  if (!kind) throw new UsageError(`--kind takes secret, ed25519, ecdsa-p256, hmac or aes, not "${v.kind}"`);
  if (kind === 'hmac-sha256' || kind === 'aes-256-gcm') {
    const value = Buffer.from(text.trim(), 'base64');
    if (kind === 'aes-256-gcm' && value.length !== 32)
      throw new UsageError(`an aes-256-gcm key is 32 bytes (base64); stdin held ${value.length}`);
    if (value.length < 16) throw new UsageError('an hmac key needs at least 16 bytes (base64)');
    return { entry: { name, kind, created, value } };
  }
  let key;
  try {
    key = createPrivateKey(text);
  } catch (err) {
    throw new UsageError(`stdin is not a private key in PEM: ${(err as Error).message}`);
  }
  const ok =
    kind === 'ed25519'
      ? key.asymmetricKeyType === 'ed25519'
      : key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
  if (!ok) throw new UsageError(`stdin holds a ${key.asymmetricKeyType ?? 'different'} key, not ${kind}`);
  return {
    entry: { name, kind, created, value: key.export({ type: 'pkcs8', format: 'der' }) },
    publicKey: createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString(),
  };
}

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
