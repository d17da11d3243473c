// Which SQLite file the audit and pins commands read: --db, else the config's audit.path, else the default.
import { existsSync } from 'node:fs';
import { loadConfig } from '../config/load.js';
import { defaultTrustDbPath, openTrustDb, type TrustDb } from '../trust/trust-db.js';

export interface DbFlags {
  db?: string | undefined;
  config?: string | undefined;
}

export const DB_OPTIONS = {
  db: { type: 'string' },
  config: { type: 'string', short: 'c' },
} as const;

/** The file the command means: --db, else the config's audit.path, else the default; or why not. */
export async function dbPathFor(flags: DbFlags): Promise<{ path: string } | string> {
  let path = flags.db;
  if (path === undefined && flags.config !== undefined) {
    try {
      path = (await loadConfig(flags.config)).config.audit.path;
    } catch (err) {
      return (err as Error).message;
    }
  }
  return { path: path ?? defaultTrustDbPath() };
}

/**
 * Opens the file for the command, or explains why not (a missing file is not created). Read-only
 * opens change nothing in the file: no table is created, no journal mode set.
 */
export async function openForCommand(
  flags: DbFlags,
  options: { readonly?: boolean } = {},
): Promise<{ db: TrustDb; path: string } | string> {
  const resolved = await dbPathFor(flags);
  if (typeof resolved === 'string') return resolved;
  const { path } = resolved;
  if (!existsSync(path)) return `no audit database at ${path} (has switchboard run with this config?)`;
  try {
    return { db: openTrustDb(path, { readonly: options.readonly ?? false }), path };
  } catch (err) {
    return `cannot open ${path}: ${(err as Error).message}`;
  }
}
