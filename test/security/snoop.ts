// Shared by the sandbox attack tests: a switchboard whose state (config file, vault, key file,
// trust database) lies outside /tmp, so only the sandbox's view can keep it from a backend, with
// the snooping backend of test/fixtures/snoop-server.ts and a victim beside it holding a secret.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { localTokenPath } from '../../src/front/http-auth.js';
import { startSwitchboard, type Switchboard } from '../../src/switchboard.js';
import { captureLog, type CapturedLog } from '../support/log-capture.js';
import { connectHttp } from '../support/mcp-clients.js';
import { makeVault } from '../vault/make-vault.js';

export const SNOOP = fileURLToPath(new URL('../fixtures/snoop-server.js', import.meta.url));
/**
 * The checkout the fixtures run from. Backends are given it to read, as a user gives a server its
 * code: where the checkout lies under /tmp (a CI clone), the sandbox's private /tmp would hide it.
 */
const CHECKOUT = fileURLToPath(new URL('../../../', import.meta.url));

/** A backend's entry with the checkout readable, unless it opts out of the sandbox. */
export function withCheckout(entry: Record<string, unknown>): Record<string, unknown> {
  const sandbox = entry['sandbox'];
  if (sandbox === 'none') return entry;
  const own = (sandbox ?? {}) as { read?: string[] };
  return { ...entry, sandbox: { ...own, read: [...(own.read ?? []), CHECKOUT] } };
}
export const CANARY = 'canary-7f3a9c1e-do-not-leak';

export interface Scene {
  sb: Switchboard;
  log: CapturedLog;
  /** Directory of the config file; the snooping backend's working directory. */
  dir: string;
  files: { config: string; vault: string; key: string; audit: string };
  /** Calls a backend's snoop tool; the answer's text, as the host got it, and parsed. */
  snoop(backend: string): Promise<{ raw: string; report: Record<string, unknown> }>;
}

/** A directory outside /tmp (a private /tmp would hide it anyway), removed when the test ends. */
export function outsideTmp(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(dirname(SNOOP), `${prefix}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** `servers` may use {{config}}, {{vault}}, {{key}}, {{audit}} and {{dir}} in args and cwd. */
export async function scene(
  t: TestContext,
  servers: Record<string, object>,
  top: Record<string, unknown> = {},
  options: { admin?: boolean; headers?: Record<string, string> } = {},
): Promise<Scene> {
  const dir = outsideTmp(t, 'scene');
  const state = join(dir, 'state');
  mkdirSync(state);
  const vault = makeVault(state, { canary: CANARY });
  const files = {
    config: join(dir, 'switchboard.json'),
    vault: vault.file,
    key: vault.keyFile,
    audit: join(state, 'audit.sqlite'),
  };
  const fill = (s: string) =>
    s.replace(/\{\{(config|vault|key|audit|dir)\}\}/g, (_, k: string) =>
      k === 'dir' ? dir : files[k as keyof typeof files],
    );
  const config = {
    servers: Object.fromEntries(
      Object.entries(
        JSON.parse(JSON.stringify(servers), (_k, v: unknown) =>
          typeof v === 'string' ? fill(v) : v,
        ) as Record<string, Record<string, unknown>>,
      ).map(([name, entry]) => [name, withCheckout(entry)]),
    ),
    vault: { file: vault.file, keyFile: vault.keyFile },
    audit: { path: files.audit },
    http: { port: 0 },
    namespacing: { mode: 'always' },
    ...top,
  };
  writeFileSync(files.config, JSON.stringify(config));
  const { sb, log } = await startFromFile(t, files.config, options.admin);
  // The front's default, the local token: the host reads it where switchboard keeps it (none
  // under auth.mode none).
  const token = existsSync(localTokenPath()) ? readFileSync(localTokenPath(), 'utf8').trim() : undefined;
  const { client } = await connectHttp(t, sb.http!.url, {
    name: 'sandbox-host',
    headers: options.headers ?? (token ? { authorization: `Bearer ${token}` } : {}),
  });
  return {
    sb,
    log,
    dir,
    files,
    snoop: async (backend) => {
      const result = (await client.callTool({ name: `${backend}_snoop`, arguments: {} })) as {
        content: { text: string }[];
      };
      const raw = JSON.stringify(result);
      return { raw, report: JSON.parse(result.content[0]!.text) as Record<string, unknown> };
    },
  };
}

/**
 * Switchboard in this process, from a config file (hidden from sandboxed backends as the file it
 * was read from), logging at debug to a log the test reads; stopped when the test ends.
 */
export async function startFromFile(
  t: TestContext,
  file: string,
  admin?: boolean,
): Promise<{ sb: Switchboard; log: CapturedLog }> {
  const loaded = await loadConfig(file);
  const log = captureLog('debug');
  const sb = await startSwitchboard({
    config: loaded.config,
    configFiles: loaded.files,
    log: log.logger,
    http: true,
    admin,
  });
  t.after(() => sb.stop());
  return { sb, log };
}

/** The bridge token of the running process whose environment holds `marker` (read from outside). */
/** How the snooping fixture reports a token it read (a digest, which redaction leaves alone). */
export const digestOf = (token: string): string => createHash('sha256').update(token).digest('hex');

export function tokenOf(marker: string): string | undefined {
  for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
      if (!environ.includes(marker)) continue;
      const token = /(?:^|\0)SWITCHBOARD_BRIDGE_TOKEN=([^\0]*)/.exec(environ)?.[1];
      if (token) return token;
    } catch {
      // gone, or not ours
    }
  }
  return undefined;
}
