// A real nats-server for mesh tests, on a free port; skipped with a clear message when absent.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

export const NATS_BIN = spawnSync('sh', ['-c', 'command -v nats-server']).stdout.toString().trim();
export const NO_NATS = NATS_BIN ? false : 'nats-server is not on PATH (Debian: apt-get install nats-server)';

import { freePort } from './free-port.js';

export { freePort };

export interface Nats {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * Starts nats-server on a free port (or `options.port`); `stop` and `start` again keep the port (a
 * restart). `jetStream`: with JetStream, its store in that directory.
 */
export async function startNats(options: { port?: number; jetStream?: string } = {}): Promise<Nats> {
  const port = options.port ?? (await freePort());
  const js = options.jetStream === undefined ? [] : ['-js', '-sd', options.jetStream];
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(NATS_BIN, ['-a', '127.0.0.1', '-p', String(port), ...js], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const c = child;
    await new Promise<void>((resolve, reject) => {
      let text = '';
      c.stderr!.on('data', (d: Buffer) => {
        text += d.toString();
        if (text.includes('Server is ready')) resolve();
      });
      c.once('exit', (code) => reject(new Error(`nats-server exited (${code}): ${text}`)));
    });
    if (options.jetStream !== undefined) await jetStreamAnswers(port);
  };
  const stop = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  };
  await start();
  return { url: `nats://127.0.0.1:${port}`, stop, start };
}

/**
 * Waits until JetStream's API answers on the server at `port`: on a loaded machine it can still
 * answer "jetstream is not enabled" for a moment after the server says it is ready.
 */
async function jetStreamAnswers(port: number): Promise<void> {
  const nc = await connect({ servers: `nats://127.0.0.1:${port}` });
  try {
    for (let tries = 0; ; tries++) {
      try {
        await (await jetstreamManager(nc, { timeout: 2000 })).getAccountInfo();
        return;
      } catch (err) {
        if (tries >= 50) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    await nc.close();
  }
}

/** An Ed25519 key pair as PEM: a node's signing key and the public key other nodes trust. */
export function nodeKeys(): { privateKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

export type NodeKeys = ReturnType<typeof nodeKeys>;

/**
 * The `mesh` section of node `node` in a mesh on `url` whose nodes sign: its own key, and the
 * public keys of the `trusted` nodes (every node of `keys` unless named).
 */
export function keyedMesh(
  url: string,
  keys: Record<string, NodeKeys>,
  node: string,
  heartbeatMs: number,
  trusted: readonly string[] = Object.keys(keys),
) {
  return {
    enabled: true,
    servers: [url],
    node,
    key: keys[node]!.privateKey,
    trust: Object.fromEntries(trusted.map((n) => [n, keys[n]!.publicKey])),
    heartbeatMs,
  };
}
