// A real switchboard over bridge-hop backends, an HTTP host, and the pino output captured: the setting of the bridge server tests.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Config, type ConfigInput } from '../../src/config/schema.js';
import { startSwitchboard, type Switchboard } from '../../src/switchboard.js';

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
  const lines: string[] = [];
  const log = pino(
    { level: 'trace' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
  const more = extra(dir);
  const servers: Json = {};
  for (const [name, allow] of Object.entries(hops)) {
    servers[name] = {
      command: process.execPath,
      args: [HOP],
      env: { TOKEN_FILE: join(dir, `${name}.token`) },
      bridge: { allow },
    };
  }
  const config = Config.parse({
    ...more,
    servers: { ...servers, ...more.servers },
    http: { port: 0 },
  });
  const sb = await startSwitchboard({ config, log, http: true });
  const host = new Client({ name: 'bridge-test-host', version: '1.0.0' });
  try {
    await host.connect(new StreamableHTTPClientTransport(new URL(sb.http!.url)));
  } catch (err) {
    await sb.stop();
    throw err;
  }
  return {
    sb,
    host,
    dir,
    log: () => lines.join(''),
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

/** Polls `check` until it returns something other than undefined; waits without asserting on time. */
export async function until<T>(check: () => Promise<T | undefined>, what: string, limit = 200): Promise<T> {
  for (let i = 0; i < limit; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}
