// A real switchboard for bridge client tests: a calling backend (fixtures/bridge-caller), server-memory, a vault key, and an HTTP host.
import type { Client } from '@modelcontextprotocol/client';
import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Switchboard } from '../../src/switchboard.js';
import { openHttp } from '../support/mcp-clients.js';
import { launchSwitchboard } from '../support/start-switchboard.js';

const CALLER = fileURLToPath(new URL('../fixtures/bridge-caller.js', import.meta.url));
const MEMORY = fileURLToPath(
  new URL('../../../node_modules/@modelcontextprotocol/server-memory/dist/index.js', import.meta.url),
);
const VAULT_SECRET = 'bridge-test-secret-0123456789abcdef';

/** The HMAC-SHA256 the vault's `demo` key gives for `data`, computed independently. */
export function expectedSignature(data: string): string {
  return createHmac('sha256', VAULT_SECRET).update(data, 'utf8').digest('base64');
}

export interface RealBridge {
  sb: Switchboard;
  /** A host on the HTTP front: calls the caller backend's tools, which use the bridge. */
  host: Client;
  /** Calls a tool of the caller backend and parses the JSON it answered. */
  callCaller(
    tool: 'relay' | 'sdk' | 'python',
    args: Record<string, unknown>,
  ): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startRealBridge(): Promise<RealBridge> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-bridge-'));
  const sb = await launchSwitchboard({
    servers: {
      caller: {
        command: process.execPath,
        args: [CALLER],
        // Not caller_sdk nor caller_python: a denied tool must look like an unknown one.
        bridge: { allow: ['memory_*', 'caller_relay', 'vault.sign'] },
      },
      memory: {
        command: process.execPath,
        args: [MEMORY],
        env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') },
        sandbox: { write: [dir] },
      },
    },
    vault: { keys: { demo: { type: 'hmac-sha256', secret: VAULT_SECRET } } },
    log: { level: 'silent' },
  });
  if (sb.failedBackends.length) {
    await sb.stop();
    throw new Error(`backends failed: ${JSON.stringify(sb.failedBackends)}`);
  }
  if (!sb.http || !sb.bridgePath) {
    await sb.stop();
    throw new Error('switchboard started without HTTP front or bridge');
  }
  const { client: host } = await openHttp(sb.http.url, { name: 'bridge-test-host' });
  return {
    sb,
    host,
    callCaller: async (tool, args) => {
      const result = await host.callTool({ name: `caller_${tool}`, arguments: args });
      const first = (result.content as { type: string; text?: string }[])[0];
      if (first?.type !== 'text' || first.text === undefined)
        throw new Error(`no text in ${JSON.stringify(result)}`);
      return JSON.parse(first.text) as Record<string, unknown>;
    },
    stop: async () => {
      await host.close();
      await sb.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
