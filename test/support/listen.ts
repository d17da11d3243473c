// An HTTP server a test stands up: listening on a port (a free one by default), and closed with its
// connections when the test ends (a client that keeps connections alive would hold it open).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

/** Listens on `host` (127.0.0.1) and `port` (a free one); answers the port it got. */
export async function listenForTest(
  t: TestContext,
  server: Server,
  host = '127.0.0.1',
  port = 0,
): Promise<number> {
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}
