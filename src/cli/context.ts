// `switchboard context get|list|put`: the shared context store from the command line. get and list
// open the state database read-only; put writes it directly (outside the pipeline: no policy, no
// validator, no watcher told), checked against the scope's schema and limits from the config, and
// recorded in the database's operator-writes table. With mesh.state jetstream, the mesh's store.
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { ContextSection } from '../config/context-schema.js';
import { loadConfig } from '../config/load.js';
import { ScopeSettingsTable, keyOf, scopeOf } from '../context/scopes.js';
import { SqliteContextStore } from '../context/sqlite-store.js';
import { ContextStoreError, type Entry, type Page } from '../context/store.js';
import type { MeshConfig } from '../config/mesh-schema.js';
import { KvContextStore } from '../mesh/state/kv-context-store.js';
import { MeshState } from '../mesh/state/mesh-state.js';
import { silentLogger } from '../log.js';
import { sha256 } from '../encoding/canonical-json.js';
import { defaultStateDbPath, openStateDb } from '../state/state-db.js';
import { parseCommand, processIo, type CommandIo } from './io.js';

export const CONTEXT_USAGE = `Usage: switchboard context <get|list|put> [options]

  get SCOPE KEY                 Print one key's value, version and expiry (exit 1 when absent)
  list SCOPE [PREFIX] [-n N]    Keys of SCOPE starting with PREFIX, in key order (default 100)
  put SCOPE KEY JSON            Write a value directly into the state database, as the operator:
      [--if-version V]          only if the key is at version V (0: only if absent)
      [--ttl-ms MS]             the key expires after MS milliseconds
                                The scope's schema and size limits (from --config) are checked;
                                its validator is not called and a running switchboard's watchers
                                are not told. Each such write is recorded in the database
                                (table context_operator_writes: who, when, scope, key, version,
                                SHA-256 of the value).

Options: --state FILE (default: state.path of --config FILE, else ~/.local/state/switchboard/state.sqlite),
         --json (machine-readable output)

With --config naming mesh.state: jetstream (and no --state), the mesh's shared store in NATS is
read and written instead: what every node serves. Its writes are not recorded as operator writes.`;

export async function runContext(argv: string[], io: CommandIo = processIo): Promise<number> {
  const parsed = parseCommand(
    'context',
    CONTEXT_USAGE,
    argv,
    {
      state: { type: 'string' },
      config: { type: 'string', short: 'c' },
      n: { type: 'string', short: 'n' },
      'if-version': { type: 'string' },
      'ttl-ms': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    io,
  );
  if (!parsed) return 2;
  const { values: v, positionals: p } = parsed;
  const sub = p[0];
  const arity = { get: 3, list: [2, 3], put: 4 } as Record<string, number | number[]>;
  const want = sub === undefined ? undefined : arity[sub];
  const fits = want !== undefined && (Array.isArray(want) ? want.includes(p.length) : want === p.length);
  if (v.help || !fits) {
    (v.help ? io.out : io.err)(CONTEXT_USAGE);
    return v.help ? 0 : 2;
  }
  let context = ContextSection.parse({});
  let path = v.state;
  let mesh: MeshConfig | undefined;
  if (v.config !== undefined) {
    try {
      const { config } = await loadConfig(v.config);
      context = config.context;
      path ??= config.state.path;
      if (config.mesh.enabled && config.mesh.state === 'jetstream') mesh = config.mesh;
    } catch (err) {
      io.err(`switchboard context: ${(err as Error).message}`);
      return 2;
    }
  }
  // With mesh.state jetstream the nodes share the store in NATS: that is what is read and written.
  if (mesh && v.state === undefined) return sharedContext(mesh, context, p, v, io);
  path ??= defaultStateDbPath();
  if (!existsSync(path)) {
    io.err(`switchboard context: no state database at ${path} (has switchboard run with this config?)`);
    return 1;
  }
  try {
    const scope = scopeOf({ scope: p[1] });
    if (sub === 'put') return put(path, context, scope, p, v, io);
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      const store = new SqliteContextStore(db, { readonly: true });
      if (sub === 'get') return printed(store.get(scope, keyOf({ key: p[2] })), scope, p[2]!, v, io);
      return listed(store.list(scope, p[2] === undefined ? '' : keyOf({ key: p[2] }), limitOf(v)), v, io);
    } finally {
      db.close();
    }
  } catch (err) {
    io.err(`switchboard context: ${(err as Error).message}`);
    return err instanceof ContextStoreError ? 1 : 2;
  }
}

interface Options {
  'if-version'?: string | undefined;
  'ttl-ms'?: string | undefined;
  n?: string | undefined;
  json?: boolean | undefined;
}

function printed(e: Entry | undefined, scope: string, key: string, v: Options, io: CommandIo): number {
  if (!e) {
    io.err(`${scope} ${key}: no such key`);
    return 1;
  }
  io.out(v.json ? JSON.stringify(shown(e)) : line(e));
  return 0;
}

function listed(page: Page, v: Options, io: CommandIo): number {
  for (const e of page.entries) io.out(v.json ? JSON.stringify(shown(e)) : line(e));
  if (page.next !== undefined) io.err(`(more after ${page.next}; raise -n)`);
  return 0;
}

function limitOf(v: Options): number {
  const limit = v.n === undefined ? 100 : Number(v.n);
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error('-n takes a positive integer');
  return limit;
}

/** A put's value and options, checked against the scope's schema and size limit from the config. */
function putRequest(context: ContextSection, scope: string, p: string[], v: Options) {
  let value: unknown;
  try {
    value = JSON.parse(p[3]!);
  } catch {
    throw new Error(`the value must be JSON (a string is "quoted"): ${p[3]}`);
  }
  const int = (s: string | undefined, flag: string, min: number) => {
    if (s === undefined) return undefined;
    const n = Number(s);
    if (!Number.isSafeInteger(n) || n < min) throw new Error(`${flag} takes an integer >= ${min}`);
    return n;
  };
  const rules = new ScopeSettingsTable(context).rules(scope);
  const json = JSON.stringify(value);
  const bytes = Buffer.byteLength(json);
  if (bytes > rules.maxValueBytes)
    throw new Error(`the value is ${bytes} bytes; ${scope} takes at most ${rules.maxValueBytes}`);
  if (rules.validate && !rules.validate(value))
    throw new Error(
      `the value does not satisfy ${scope}'s schema: ${JSON.stringify(rules.validate.errors?.[0])}`,
    );
  const options = {
    ifVersion: int(v['if-version'], '--if-version', 0),
    ttlMs: int(v['ttl-ms'], '--ttl-ms', 1) ?? rules.ttlMs,
  };
  return { json, options, rules };
}

/** get, list and put on the mesh's shared store (JetStream KV), as on the state database. */
async function sharedContext(
  mesh: MeshConfig,
  context: ContextSection,
  p: string[],
  v: Options,
  io: CommandIo,
): Promise<number> {
  const state = new MeshState(mesh, silentLogger);
  const store = new KvContextStore(state);
  try {
    const scope = scopeOf({ scope: p[1] });
    if (p[0] === 'put') {
      const { json, options, rules } = putRequest(context, scope, p, v);
      const entry = await store.put(scope, keyOf({ key: p[2] }), json, { ...options, limits: rules.limits });
      io.out(v.json ? JSON.stringify(shown(entry)) : `${scope} ${entry.key} version ${entry.version}`);
      return 0;
    }
    if (p[0] === 'get') return printed(await store.get(scope, keyOf({ key: p[2] })), scope, p[2]!, v, io);
    const page = await store.list(scope, p[2] === undefined ? '' : keyOf({ key: p[2] }), limitOf(v));
    return listed(page, v, io);
  } catch (err) {
    io.err(`switchboard context: ${(err as Error).message}`);
    return err instanceof ContextStoreError ? 1 : 2;
  } finally {
    await store.close();
    await state.close();
  }
}

function put(
  path: string,
  context: ContextSection,
  scope: string,
  p: string[],
  v: Options,
  io: CommandIo,
): number {
  const key = keyOf({ key: p[2] });
  const { json, options, rules } = putRequest(context, scope, p, v);
  const db = openStateDb(path);
  try {
    const store = new SqliteContextStore(db);
    const entry = store.put(scope, key, json, { ...options, limits: rules.limits });
    store.recordOperatorWrite(`operator:${userInfo().username}`, entry, sha256(json));
    io.out(v.json ? JSON.stringify(shown(entry)) : `${scope} ${key} version ${entry.version}`);
    return 0;
  } finally {
    db.close();
  }
}

function shown(e: Entry): Record<string, unknown> {
  return {
    scope: e.scope,
    key: e.key,
    version: e.version,
    updatedAt: new Date(e.updatedAt).toISOString(),
    ...(e.expiresAt !== undefined && { expiresAt: new Date(e.expiresAt).toISOString() }),
    value: JSON.parse(e.json) as unknown,
  };
}

function line(e: Entry): string {
  const expiry = e.expiresAt === undefined ? '' : ` expires ${new Date(e.expiresAt).toISOString()}`;
  return `${e.key}\tv${e.version}${expiry}\t${e.json}`;
}
