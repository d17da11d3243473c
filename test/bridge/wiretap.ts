// Capture helpers for the end-to-end test: a TCP tap in front of the HTTP front, the tap fixture's files, and a secret's spellings.
import { readdirSync, readFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KeyObject } from 'node:crypto';

/** The tap fixture, to put in front of a stdio backend's command. */
export const TAP = fileURLToPath(new URL('../fixtures/tap.js', import.meta.url));

export interface TcpTap {
  /** Port to connect to instead of the target's. */
  readonly port: number;
  /** Every byte each way so far, client → target then target → client. */
  captured(): { sent: Buffer; received: Buffer };
  close(): Promise<void>;
}

/** A TCP forwarder on 127.0.0.1 that copies every byte of every connection to the target port. */
export async function startTcpTap(targetPort: number): Promise<TcpTap> {
  const sent: Buffer[] = [];
  const received: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const target = createConnection({ host: '127.0.0.1', port: targetPort });
    sockets.add(client).add(target);
    client.on('data', (chunk: Buffer) => {
      sent.push(chunk);
      target.write(chunk);
    });
    target.on('data', (chunk: Buffer) => {
      received.push(chunk);
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      target.destroy();
      sockets.delete(client);
      sockets.delete(target);
    };
    for (const s of [client, target]) {
      s.on('close', end);
      s.on('error', end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    captured: () => ({ sent: Buffer.concat(sent), received: Buffer.concat(received) }),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The tap fixture's capture files in `dir`, by file name (e.g. `search.bridge-in`). */
export function readCaptures(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const name of readdirSync(dir)) {
    if (/\.(stdin|stdout|stderr|bridge-in|bridge-out)$/.test(name))
      out.set(name, readFileSync(join(dir, name)));
  }
  return out;
}

/** Every way an Ed25519 private key could be written down: PEM, each PEM line, DER and seed in several encodings. */
export function privateKeyForms(key: KeyObject): Buffer[] {
  const pem = key.export({ type: 'pkcs8', format: 'pem' }).toString();
  const der = key.export({ type: 'pkcs8', format: 'der' });
  const jwk = key.export({ format: 'jwk' });
  const seed = Buffer.from(String(jwk.d), 'base64url');
  const body = pem.split('\n').filter((l) => l && !l.startsWith('-----'));
  return [
    Buffer.from(pem),
    ...body.map((l) => Buffer.from(l)),
    Buffer.from(body.join('')),
    ...binaryForms(der),
    ...binaryForms(seed),
  ];
}

/** A shared secret as text and as the encodings of its bytes. */
export function secretForms(secret: string): Buffer[] {
  return [Buffer.from(secret), ...binaryForms(Buffer.from(secret))];
}

function binaryForms(bytes: Buffer): Buffer[] {
  const hex = bytes.toString('hex');
  return [
    bytes,
    Buffer.from(hex),
    Buffer.from(hex.toUpperCase()),
    Buffer.from(bytes.toString('base64')),
    Buffer.from(bytes.toString('base64url')),
  ];
}
