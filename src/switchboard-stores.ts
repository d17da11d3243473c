// What a switchboard keeps open while it runs, opened in the order a start needs: the vault (a
// wrong key stops the start before any backend or secret is touched), the redactor loaded with its
// secrets, the trust database (audit, pins, approvals) and the state database.
import type { Config } from './config/schema.js';
import type { Logger } from './log.js';
import { openTrust, type Trust } from './trust/trust.js';
import { defaultStateDbPath, openStateDb, type StateDb } from './state/state-db.js';
import { openVault, withSecrets } from './vault/open.js';
import { Redactor } from './vault/redactor.js';
import type { Vault } from './vault/vault.js';

export class StartupError extends Error {
  override name = 'StartupError';
}

export interface Stores {
  vault: Vault;
  /** The config with the vault's secrets put where it names them. */
  runConfig: Config;
  redactor: Redactor;
  trust: Trust;
  state: StateDb;
}

export function openStores(
  config: Config,
  log: Logger,
  options: { redactor?: Redactor | undefined; env?: NodeJS.ProcessEnv | undefined },
): Stores {
  // The vault first: a wrong key stops the start before any backend or secret is touched.
  let vault: Vault;
  let runConfig: Config;
  try {
    vault = openVault(config, options.env);
    runConfig = withSecrets(config, vault);
  } catch (err) {
    throw new StartupError(`cannot open the vault: ${(err as Error).message}`);
  }
  const redactor = options.redactor ?? new Redactor();
  redactor.load({ secrets: vault.material, patterns: config.redaction.patterns });
  if (redactor.tooShort.length) {
    log.warn(
      { secrets: redactor.tooShort },
      'vault secrets shorter than 4 characters cannot be redacted safely; they are not',
    );
  }
  let trust: Trust;
  try {
    trust = openTrust(config, log, redactor, options.env);
  } catch (err) {
    // Asked for an audit trail or pins and cannot keep them: refuse to run without them.
    throw new StartupError(
      `cannot open the audit/pins database ${config.audit.path ?? '(default path)'}: ${(err as Error).message}` +
        `\nSet audit.path to a writable file, or turn audit.enabled and pinning.enabled off.`,
    );
  }
  let state: StateDb;
  const statePath = config.state.path ?? defaultStateDbPath(options.env);
  try {
    state = openStateDb(statePath);
  } catch (err) {
    trust.close();
    throw new StartupError(
      `cannot open the state database ${statePath}: ${(err as Error).message}\nSet state.path to a writable file.`,
    );
  }
  return { vault, runConfig, redactor, trust, state };
}
