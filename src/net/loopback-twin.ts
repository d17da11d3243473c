// Listening on loopback without leaving its other address to anyone: a server on 127.0.0.1:P (or
// 0.0.0.0:P) also takes [::1]:P, and one on [::1]:P takes 127.0.0.1:P. Any other process (a
// sandboxed backend shares the network) that held the other address could answer the hosts whose
// `localhost` resolves to it first, and receive their tokens; so a twin someone holds is a port in
// use. Connections on the twin are handed to the same HTTP server.
import { createServer, type Server } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import type { Server as HttpServer } from 'node:http';

/** How many free ports are tried, when any will do, for one whose twin is free too. */
const ATTEMPTS = 5;

/** The loopback address a listener on `bound` leaves to others, if any. */
function twinOf(bound: string): string | undefined {
  if (bound === '127.0.0.1' || bound === '0.0.0.0') return '::1';
  if (bound === '::1') return '127.0.0.1';
  return undefined;
}

/** A port in use: the bound address or its twin. `address` is the one found held. */
export class PortInUse extends Error {
  readonly code = 'EADDRINUSE';
  constructor(
    readonly address: string,
    readonly port: number,
  ) {
    super(`${address.includes(':') ? `[${address}]` : address}:${port} is in use`);
  }
}

/**
 * Listens on `host`:`port` and, for a loopback address, its twin at the same port; resolves with
 * the port bound and the twin listener (to close with the server), none where the machine has no
 * such address. Rejects with PortInUse when either is held (port 0: after ATTEMPTS free ports
 * whose twins were all held), or with the listen error.
 */
export async function listenWithTwin(
  server: HttpServer,
  host: string,
  port: number,
): Promise<{ port: number; twin: Server | undefined }> {
  for (let attempt = 1; ; attempt++) {
    await listen(server, port, host).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'EADDRINUSE' ? new PortInUse(host, port) : err;
    });
    const address = server.address();
    // `localhost` was bound as whichever address it resolved to first.
    const bound = typeof address === 'object' && address ? address : undefined;
    const twin = twinOf(bound?.address ?? host);
    const at = bound?.port ?? port;
    if (!twin) return { port: at, twin: undefined };
    const listener = createServer((socket) => server.emit('connection', socket));
    try {
      await listen(listener, at, twin);
      // Later errors (a failed accept) are the server's, as they would be on its own address.
      listener.on('error', (err) => server.emit('error', err));
      return { port: at, twin: listener };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // EADDRNOTAVAIL, EAFNOSUPPORT: this machine has no such address, so no one can take it.
      if (code !== 'EADDRINUSE') return { port: at, twin: undefined };
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (port !== 0 || attempt >= ATTEMPTS) throw new PortInUse(twin, at);
    }
  }
}

function listen(server: Server | HttpServer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, ipv6Only: host === '::1' }, () => resolve());
  });
}

/**
 * Rejects with PortInUse when `host`:`port` (or its loopback twin) cannot be listened on now:
 * found before anything else starts, rather than once backends have been spawned. A fixed port
 * only; what takes it between this and the real listen is still found there.
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createHttpServer();
  const { twin } = await listenWithTwin(probe, host, port);
  await Promise.all([
    new Promise<void>((resolve) => probe.close(() => resolve())),
    twin && new Promise<void>((resolve) => twin.close(() => resolve())),
  ]);
}
