// Shared by the admin tests: a switchboard with the admin listener on a free port and its files in
// a temporary directory, the bundled example servers behind it, and an authenticated fetch.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { startGateway } from '../support/start-switchboard.js';

export const NOTES = fileURLToPath(new URL('../../examples/servers/notes.js', import.meta.url));
export const CLOCK = fileURLToPath(new URL('../../examples/servers/clock.js', import.meta.url));

export function example(path: string): Record<string, unknown> {
  return { command: process.execPath, args: [path], sandbox: 'none' };
}

export async function tempDir(t: TestContext, prefix = 'sb-admin-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export interface AdminScene {
  sb: Switchboard;
  /** The admin listener's base URL. */
  url: string;
  token: string;
  dir: string;
  /** GET/POST on the admin listener with the admin token (or `auth`, or none with null). */
  admin(path: string, init?: RequestInit & { auth?: string | null }): Promise<Response>;
}

export async function adminScene(
  t: TestContext,
  input: ConfigInput,
  options: { awaitBackends?: boolean } = {},
): Promise<AdminScene> {
  const dir = await tempDir(t);
  const audit = input.audit ?? { path: join(dir, 'audit.sqlite') };
  const sb = await startGateway(
    t,
    {
      ...input,
      audit,
      state: { path: join(dir, 'state.sqlite') },
      admin: { port: 0, stateDir: dir, ...input.admin },
    },
    { admin: true, awaitBackends: options.awaitBackends },
  );
  const server = sb.admin?.server;
  if (!server) throw new Error(`the admin listener did not start: ${sb.admin?.error}`);
  const { readFileSync } = await import('node:fs');
  const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
  return {
    sb,
    url: server.url,
    token,
    dir,
    admin: (path, init = {}) => {
      const { auth, ...rest } = init;
      const headers = new Headers(rest.headers);
      const credential = auth === undefined ? token : auth;
      if (credential !== null) headers.set('authorization', `Bearer ${credential}`);
      return fetch(server.url + path, { ...rest, headers });
    },
  };
}
