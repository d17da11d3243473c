// How `switchboard status | tools | call` reach a running switchboard's admin listener: --url and
// --token, else SWITCHBOARD_ADMIN_URL / SWITCHBOARD_ADMIN_TOKEN, else admin.json in the state
// directory (written by the running switchboard, 0600), with admin-token there as the token.
import { join } from 'node:path';
import { adminDir, readAdminInfo, TOKEN_FILE } from '../admin/admin-files.js';
import { processAlive } from '../state/process-alive.js';
import { readTokenFile } from '../state/token-file.js';

export const ADMIN_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  'state-dir': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const ADMIN_OPTIONS_USAGE = `Finding switchboard (first that is given):
  --url URL --token TOKEN        the admin listener and its token
  SWITCHBOARD_ADMIN_URL, SWITCHBOARD_ADMIN_TOKEN (environment)
  admin.json in --state-dir DIR (default $XDG_STATE_HOME/switchboard, else ~/.local/state/switchboard),
                                 written by the running switchboard`;

export interface AdminFlags {
  url?: string | undefined;
  token?: string | undefined;
  'state-dir'?: string | undefined;
}

export class AdminClientError extends Error {}

/** How long a read (status, tools) waits for the listener. */
const READ_TIMEOUT_MS = 30_000;

/** A --url as the listener's base: http(s) only, without a trailing slash or the API prefix. */
function adminUrl(given: string): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new AdminClientError(
      `--url ${given} is not a URL (the admin listener's, such as http://127.0.0.1:7451)`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new AdminClientError(`--url ${given} is not an http(s) URL`);
  return url.href.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

export class AdminClient {
  constructor(
    readonly url: string,
    private readonly token: string,
  ) {}

  static find(flags: AdminFlags, env: NodeJS.ProcessEnv = process.env): AdminClient {
    const dir = adminDir(flags['state-dir'], env);
    const given = flags.url || env.SWITCHBOARD_ADMIN_URL || undefined;
    const info = readAdminInfo(dir);
    // Left by a switchboard that did not stop cleanly: its port may be anyone's now (a backend
    // listening there would be sent the token), so it is not used.
    if (given === undefined && info && !processAlive(info.pid))
      throw new AdminClientError(
        `no running switchboard found: ${join(dir, 'admin.json')} names process ${info.pid}, which is not running (is \`switchboard up\` running?); or give --url and --token`,
      );
    const url = given === undefined ? info?.url : adminUrl(given);
    if (!url)
      throw new AdminClientError(
        `no running switchboard found: ${join(dir, 'admin.json')} is absent (is \`switchboard up\` running, with admin.enabled?); or give --url and --token`,
      );
    // The token kept here is the local switchboard's: it goes only to the listener admin.json
    // names (a mistyped port, or another host, would be handed the admin credential).
    const local = info !== undefined && sameOrigin(url, info.url) && processAlive(info.pid);
    const token =
      flags.token ||
      env.SWITCHBOARD_ADMIN_TOKEN ||
      (local || given === undefined ? (info?.token ?? readTokenFile(join(dir, TOKEN_FILE))) : undefined);
    if (!token)
      throw new AdminClientError(
        given !== undefined && !local
          ? `no admin token for ${url}: give --token (the local admin token is sent only to the admin listener ${join(dir, 'admin.json')} names)`
          : `no admin token: give --token, or run as the user switchboard runs as`,
      );
    return new AdminClient(url, token);
  }

  /** A read, which a listener that never answers does not hold for ever. */
  async get(path: string): Promise<unknown> {
    return this.request('GET', path, undefined, AbortSignal.timeout(READ_TIMEOUT_MS));
  }

  async post(path: string, body: unknown): Promise<unknown> {
    return this.request('POST', path, body);
  }

  private async request(
    method: string,
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(this.url + path, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (err) {
      if (signal?.aborted)
        throw new AdminClientError(`${this.url} did not answer within ${READ_TIMEOUT_MS / 1000} s`);
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      throw new AdminClientError(
        `cannot reach switchboard's admin listener at ${this.url} (${cause ?? (err as Error).message}): is it running?`,
      );
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    // An MCP endpoint (switchboard's own HTTP front, say) answers in JSON-RPC, a refused token
    // included: the URL is the wrong door, whatever the status.
    if ((parsed as { jsonrpc?: unknown } | null | undefined)?.jsonrpc === '2.0')
      throw new AdminClientError(
        `${this.url} is an MCP endpoint, not switchboard's admin listener (${res.status}): give the admin URL (admin.port, 7451 by default)`,
      );
    if (res.status === 401)
      throw new AdminClientError(`the admin listener at ${this.url} refused the token (401)`);
    if (parsed === undefined)
      throw new AdminClientError(`${this.url}${path} answered ${res.status} with something not JSON`);
    if (!res.ok && res.status !== 503) {
      const message = (parsed as { message?: string } | null)?.message ?? text;
      throw new AdminClientError(`${this.url}${path} answered ${res.status}: ${message}`);
    }
    return parsed;
  }
}
