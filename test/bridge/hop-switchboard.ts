// A real switchboard over bridge-hop backends, an HTTP host, and the pino output captured: the setting of the bridge server tests.
import type { Client } from '@modelcontextprotocol/client';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { captureLog } from '../support/log-capture.js';
import { openHttp } from '../support/mcp-clients.js';
import { httpUrl, launchSwitchboard } from '../support/start-switchboard.js';

export const HOP = fileURLToPath(new URL('../fixtures/bridge-hop.js', import.meta.url));

export type Json = Record<string, unknown>;

export interface HopSwitchboard {
  sb: Switchboard;
  host: Client;
  /** A scratch directory removed at stop (token files, memory files). */
  dir: string;
  /** Everything switchboard logged so far, at trace level. */
  log(): string;
  /** Calls a tool as the host and parses the JSON text it answered. */
  call(name: string, args?: Json, options?: { signal?: AbortSignal }): Promise<Json>;
  stop(): Promise<void>;
}

/** Parses the JSON text of a tool result (what bridge-hop tools answer). */
export function jsonOf(result: { content?: unknown }): Json {
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  if (first?.type !== 'text' || first.text === undefined)
    throw new Error(`no text in ${JSON.stringify(result)}`);
  return JSON.parse(first.text) as Json;
}

/**
 * Starts switchboard with one bridge-hop backend per entry of `hops` (name → its bridge.allow)
 * and whatever else `extra` configures.
 */
export async function startHops(
  hops: Record<string, string[]>,
  extra: (dir: string) => Partial<ConfigInput> = () => ({}),
): Promise<HopSwitchboard> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-hop-'));
  const log = captureLog('trace');
  const more = extra(dir);
  const servers: NonNullable<ConfigInput['servers']> = {};
  for (const [name, allow] of Object.entries(hops)) {
    servers[name] = {
      command: process.execPath,
      args: [HOP],
      env: { TOKEN_FILE: join(dir, `${name}.token`) },
      // The hop writes its token where the test reads it: a directory the sandbox lets it write.
      sandbox: { write: [dir] },
      bridge: { allow },
    };
  }
  const sb = await launchSwitchboard(
    { ...more, servers: { ...servers, ...more.servers } },
    { log: log.logger },
  );
  let host: Client;
  try {
    ({ client: host } = await openHttp(httpUrl(sb), { name: 'bridge-test-host' }));
  } catch (err) {
    await sb.stop();
    throw err;
  }
  return {
    sb,
    host,
    dir,
    log: log.text,
    call: async (name, args = {}, options = {}) =>
      jsonOf(
        await host.callTool({ name, arguments: args }, options.signal ? { signal: options.signal } : {}),
      ),
    stop: async () => {
      await host.close().catch(() => {});
      await sb.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
