// The other loopback address of a listener bound to one: a server on 127.0.0.1:P (or 0.0.0.0:P)
// also takes [::1]:P (and the other way round), so no other process (a sandboxed backend shares the
// network) can listen there and answer the hosts whose `localhost` resolves to that one first,
// receiving their tokens. Connections there are handed to the same HTTP server.
import { createServer, type Server } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import type { Logger } from '../log.js';

/** The loopback address a listener on `bound` leaves to others, if any. */
function twinOf(bound: string): string | undefined {
  if (bound === '127.0.0.1' || bound === '0.0.0.0') return '::1';
  if (bound === '::1') return '127.0.0.1';
  return undefined;
}

/**
 * Takes the twin address of `server`'s (bound to `host`, on `port`) for it; resolves with the
 * twin listener to close with it, or undefined where there is none (no IPv6 here, or an address
 * that is not loopback's). A twin someone already holds is said in a warning: hosts that reach
 * `localhost` that way would reach them.
 */
export async function claimLoopbackTwin(
  server: HttpServer,
  host: string,
  port: number,
  log: Logger,
  what: string,
): Promise<Server | undefined> {
  // `localhost` was bound as whichever address it resolved to first.
  const address = server.address();
  const twin = twinOf(typeof address === 'object' && address ? address.address : host);
  if (!twin) return undefined;
  const listener = createServer((socket) => server.emit('connection', socket));
  return new Promise((resolve) => {
    listener.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE')
        log.warn(
          { address: twin, port },
          `${what}: another process listens on ${twin.includes(':') ? `[${twin}]` : twin}:${port}; hosts that connect to localhost:${port} may reach it instead of switchboard`,
        );
      // EADDRNOTAVAIL, EAFNOSUPPORT: this machine has no such address, so no one can take it.
      resolve(undefined);
    });
    listener.listen({ port, host: twin, ipv6Only: twin === '::1' }, () => resolve(listener));
  });
}
