// The `mesh:` section: joining other switchboards over a NATS cluster, so a host or backend on any
// node sees and calls the servers of every node (docs/mesh.md).
import { hostname } from 'node:os';
import { z } from 'zod';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** A node name from the host name, kept to what a subject token and a principal may hold. */
function defaultNode(): string {
  const cleaned = hostname()
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .replace(/^-+/, '');
  return (cleaned || 'node').slice(0, 64);
}

export const MeshSection = z
  .object({
    enabled: z
      .boolean()
      .default(false)
      .describe('Join the mesh: announce this node, serve and call other nodes.'),
    servers: z
      .array(z.string().min(1))
      .min(1)
      .default(['nats://127.0.0.1:4222'])
      .describe('NATS server URLs of the cluster (nats://host:port, tls://host:port).'),
    name: z
      .string()
      .regex(NAME, 'letters, digits, _ and - (at most 64)')
      .default('switchboard')
      .describe('The mesh name: the first token of every subject, so several meshes can share a cluster.'),
    node: z
      .string()
      .regex(NAME, 'letters, digits, _ and - (at most 64)')
      .default(defaultNode)
      .describe('This node’s name, unique in the mesh (default: the host name).'),
    credentials: z
      .object({
        token: z.string().optional().describe('A NATS token (${env:…} and ${secret:…} references work).'),
        user: z.string().optional().describe('NATS user name (with password).'),
        password: z.string().optional().describe('NATS password (with user).'),
        nkeySeed: z.string().optional().describe('An NKey user seed (SU…), for nkey authentication.'),
        credsFile: z
          .string()
          .optional()
          .describe('A NATS .creds file (JWT and NKey seed), for decentralised auth.'),
      })
      .strict()
      .prefault({})
      .describe('How this node authenticates to NATS: one of token, user/password, nkeySeed, credsFile.'),
    tls: z
      .object({
        ca: z.string().optional().describe('CA certificate file that signs the NATS servers’ certificates.'),
        cert: z.string().optional().describe('Client certificate file (mutual TLS).'),
        key: z.string().optional().describe('Client key file (mutual TLS).'),
      })
      .strict()
      .optional()
      .describe('TLS to the NATS servers (set to require it).'),
    key: z
      .string()
      .optional()
      .describe(
        'This node’s Ed25519 private key (PKCS#8 PEM, or the path of a file only its owner may read) that signs the caller assertions it sends, and the session key each pair of nodes MACs them with once agreed (docs/mesh.md). Unset: the node can call no other node.',
      ),
    trust: z
      .record(z.string().regex(NAME), z.string())
      .default({})
      .describe(
        'The nodes this node calls and serves, by node name: each one’s Ed25519 public key (SPKI PEM, or a file path). Any other node is not heard (its servers are never called), and a call from it is refused and audited.',
      ),
    heartbeatMs: z
      .number()
      .int()
      .min(50)
      .max(10_000)
      .default(250)
      .describe('How often this node tells the mesh it is alive; a node silent for 3 of these is down.'),
    assertionTtlSeconds: z
      .number()
      .int()
      .min(1)
      .max(300)
      .default(30)
      .describe('How long a signed caller assertion is valid (it is also bound to one call and one node).'),
    state: z
      .enum(['local', 'jetstream'])
      .default('local')
      .describe(
        'Where the state several nodes need lives: local (each node its own SQLite file) or jetstream (NATS JetStream KV buckets shared by the nodes: the context store, workflow runs, task ownership). jetstream needs JetStream on the NATS servers.',
      ),
    stateReplicas: z
      .number()
      .int()
      .min(1)
      .max(5)
      .default(1)
      .describe('Replicas of each JetStream bucket (1 for a single NATS server; 3 in a cluster).'),
    leaseMs: z
      .number()
      .int()
      .min(200)
      .max(600_000)
      .default(5_000)
      .describe(
        'How long a workflow run stays its node’s without the node renewing it (mesh.state jetstream): past this, another node takes it over.',
      ),
  })
  .strict()
  .prefault({})
  .check((ctx) => {
    const c = ctx.value.credentials;
    const ways = [c.token, c.user, c.nkeySeed, c.credsFile].filter((v) => v !== undefined).length;
    if (ways > 1)
      ctx.issues.push({
        code: 'custom',
        input: c,
        path: ['credentials'],
        message: 'one of token, user/password, nkeySeed, credsFile',
      });
    if ((c.user === undefined) !== (c.password === undefined))
      ctx.issues.push({
        code: 'custom',
        input: c,
        path: ['credentials'],
        message: 'user and password together',
      });
  })
  .describe('A mesh of switchboards over NATS (docs/mesh.md).');

export type MeshConfig = z.output<typeof MeshSection>;
