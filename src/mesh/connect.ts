// This node's NATS connection options from the mesh config: servers, credentials (token, user and
// password, an NKey seed, a .creds file), TLS; it reconnects by itself for as long as it runs.
import { readFileSync } from 'node:fs';
import { credsAuthenticator, nkeyAuthenticator, type ConnectionOptions } from '@nats-io/transport-node';
import type { MeshConfig } from '../config/mesh-schema.js';

export function connectionOptions(mesh: MeshConfig): ConnectionOptions {
  const c = mesh.credentials;
  const options: ConnectionOptions = {
    servers: mesh.servers,
    name: `switchboard ${mesh.name}/${mesh.node}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    // A restarted NATS server is found again quickly: a node's absence should be short.
    pingInterval: 2_000,
    waitOnFirstConnect: true,
  };
  if (c.token !== undefined) options.token = c.token;
  if (c.user !== undefined) Object.assign(options, { user: c.user, pass: c.password });
  if (c.nkeySeed !== undefined)
    options.authenticator = nkeyAuthenticator(new TextEncoder().encode(c.nkeySeed));
  if (c.credsFile !== undefined) options.authenticator = credsAuthenticator(readFileSync(c.credsFile));
  if (mesh.tls)
    options.tls = {
      ...(mesh.tls.ca ? { caFile: mesh.tls.ca } : {}),
      ...(mesh.tls.cert ? { certFile: mesh.tls.cert } : {}),
      ...(mesh.tls.key ? { keyFile: mesh.tls.key } : {}),
    };
  return options;
}
