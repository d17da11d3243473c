// A real switchboard with probe backends a, b and c, and bridge clients connected as them over the
// real socket: what the context and events tests drive.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Params } from '../../src/jsonrpc/message.js';
import { BridgeError, connectBridge, type BridgeClient } from '../../src/public/bridge-client/index.js';
import type { Switchboard } from '../../src/switchboard.js';
import { probe } from '../gateway/harness.js';
import { until } from '../support/poll.js';
import { startGateway } from '../support/start-switchboard.js';

export interface Started {
  sb: Switchboard;
  dir: string;
  /** A bridge client authenticated as backend `name` (closed when the test ends). */
  as(name: string): Promise<BridgeClient>;
}

export function stateDir(): string {
  return mkdtempSync(join(tmpdir(), 'sb-context-'));
}

export async function start(
  t: TestContext,
  extra: Partial<ConfigInput> = {},
  dir = stateDir(),
): Promise<Started> {
  const sb = await startGateway(t, {
    servers: { a: probe('a'), b: probe('b'), c: probe('c') },
    state: { path: join(dir, 'state.sqlite') },
    audit: { path: join(dir, 'audit.sqlite') },
    log: { level: 'silent' },
    ...extra,
  } as ConfigInput);
  return {
    sb,
    dir,
    as: async (name) => {
      const env = sb.gateway.bridgeEnv!(name, 0);
      const client = await connectBridge({ path: sb.bridgePath!, token: env.SWITCHBOARD_BRIDGE_TOKEN! });
      t.after(() => client.close());
      return client;
    },
  };
}

/** The error a bridge request fails with. */
export async function failure(p: Promise<unknown>): Promise<BridgeError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof BridgeError) return err;
    throw err;
  }
  throw new Error('expected the request to fail');
}

/** Notifications a client receives, kept in order, with a way to wait for one. */
export class Received {
  readonly all: { method: string; params: Params }[] = [];
  constructor(client: BridgeClient) {
    client.onNotification = (method, params) => this.all.push({ method, params: params ?? {} });
  }
  of(method: string): Params[] {
    return this.all.filter((n) => n.method === method).map((n) => n.params);
  }
  async count(method: string, n: number): Promise<Params[]> {
    return until(() => (this.of(method).length >= n ? this.of(method) : undefined), `${n} ${method}`);
  }
}
