// `switchboard doctor`'s mesh checks: this node's key and the keys it trusts, read as the mesh reads
// them; the secret files NATS is given; and whether the NATS servers take these credentials (and
// offer JetStream when the mesh keeps its state there).
import { existsSync, readFileSync } from 'node:fs';
import { createPublicKey } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { MeshConfig } from '../config/mesh-schema.js';
import { privateKeyOf, publicKeyOf } from '../mesh/assertion.js';
import { connectionOptions } from '../mesh/connect.js';
import { modeCheck, type Check } from './doctor-check.js';

/** How long the NATS servers have to answer. */
const CONNECT_MS = 2_000;

export async function meshChecks(mesh: MeshConfig): Promise<Check[]> {
  if (!mesh.enabled) return [];
  return [...keyChecks(mesh), ...secretFileChecks(mesh), await natsCheck(mesh)];
}

/** The node's own key: set, owner-only, an Ed25519 private key; and its public half, if it is one. */
function ownKeyCheck(key: string | undefined): { check: Check; own: string | undefined } {
  const name = 'mesh.key';
  if (key === undefined)
    return {
      check: {
        status: 'warn',
        name,
        detail: 'not set: this node neither calls nor serves other nodes',
        fix: 'openssl genpkey -algorithm ed25519 -out node.key, and set mesh.key to that file',
      },
      own: undefined,
    };
  const mode = isFile(key) ? modeCheck(name, key, 0o600, 'fail') : undefined;
  // Said as the mode alone, with its chmod; the key is still read, for this node's trust entry.
  if (mode && mode.status !== 'ok') return { check: mode, own: ownKeyOf(readFileSync(key, 'utf8')) };
  try {
    const own = spki(createPublicKey(privateKeyOf(key)));
    return { check: { status: 'ok', name, detail: `${fileOrInline(key)} (Ed25519, owner-only)` }, own };
  } catch (err) {
    return {
      check: {
        status: 'fail',
        name,
        detail: (err as Error).message,
        fix: 'an Ed25519 private key: openssl genpkey -algorithm ed25519 -out node.key',
      },
      own: undefined,
    };
  }
}

function isFile(value: string): boolean {
  return !value.includes('-----BEGIN') && existsSync(value);
}

/** This node's public key from its private key's PEM, if it is one. */
function ownKeyOf(pem: string): string | undefined {
  try {
    return spki(createPublicKey(privateKeyOf(pem)));
  } catch {
    return undefined;
  }
}

function fileOrInline(value: string): string {
  return value.includes('-----BEGIN') ? 'inline PEM' : value;
}

/** The node's own key, the keys it trusts, and whether its own entry in a shared trust list is its key. */
function keyChecks(mesh: MeshConfig): Check[] {
  const { check, own } = ownKeyCheck(mesh.key);
  const checks: Check[] = [check];
  const trusted = Object.entries(mesh.trust);
  if (trusted.length === 0)
    checks.push({
      status: 'warn',
      name: 'mesh.trust',
      detail: 'no node trusted: this node hears no other node',
      fix: "give each other node's public key: mesh.trust.<node>: <file> (openssl pkey -in node.key -pubout)",
    });
  for (const [node, value] of trusted) {
    const name = `mesh.trust.${node}`;
    try {
      const key = spki(publicKeyOf(value));
      if (node === mesh.node && own !== undefined && key !== own)
        checks.push({
          status: 'fail',
          name,
          detail: `names this node (${node}) with a key that is not mesh.key's`,
          fix: "put this node's public key there (openssl pkey -in <mesh.key> -pubout), or remove the entry",
        });
      else checks.push({ status: 'ok', name, detail: `${fileOrInline(value)} (Ed25519)` });
    } catch (err) {
      checks.push({
        status: 'fail',
        name,
        detail: (err as Error).message,
        fix: `node ${node}'s Ed25519 public key (SPKI PEM): openssl pkey -in <its key> -pubout`,
      });
    }
  }
  return checks;
}

function spki(key: ReturnType<typeof createPublicKey>): string {
  return key.export({ type: 'spki', format: 'der' }).toString('base64');
}

/** A .creds file and a TLS client key are secrets NATS reads: missing fails, readable by others warns. */
function secretFileChecks(mesh: MeshConfig): Check[] {
  const files: [string, string | undefined][] = [
    ['mesh.credentials.credsFile', mesh.credentials.credsFile],
    ['mesh.tls.key', mesh.tls?.key],
  ];
  return files.flatMap(([name, path]): Check[] => {
    if (path === undefined) return [];
    if (!existsSync(path)) return [{ status: 'fail', name, detail: `${path} not found` }];
    return [modeCheck(name, path, 0o600)];
  });
}

/** Connects once, as the node would (its servers, credentials and TLS), without retrying. */
async function natsCheck(mesh: MeshConfig): Promise<Check> {
  const name = 'mesh.servers';
  let nc;
  try {
    nc = await connect({
      ...connectionOptions(mesh),
      waitOnFirstConnect: false,
      reconnect: false,
      timeout: CONNECT_MS,
    });
  } catch (err) {
    return {
      status: 'fail',
      name,
      detail: `${mesh.servers.join(', ')}: ${(err as Error).message}`,
      fix: 'start the NATS server, or correct mesh.servers, mesh.credentials or mesh.tls',
    };
  }
  try {
    const info = nc.info;
    const detail = `${nc.getServer()} answers (nats-server ${info?.version ?? '?'})`;
    if (mesh.state !== 'jetstream') return { status: 'ok', name, detail };
    try {
      await (await jetstreamManager(nc, { timeout: CONNECT_MS })).getAccountInfo();
      return { status: 'ok', name, detail: `${detail}, JetStream on` };
    } catch (err) {
      return {
        status: 'fail',
        name,
        detail: `${detail}, but JetStream is not available to this account: ${(err as Error).message}`,
        fix: 'run nats-server with JetStream (nats-server -js), or set mesh.state: local',
      };
    }
  } finally {
    await nc.close();
  }
}
