// The mesh's shared state (mesh.state: jetstream): one NATS connection of its own, apart from the
// call path's, and the JetStream KV buckets the shared stores keep their data in. A node whose NATS
// server is not there yet starts anyway: every operation waits for the connection, up to a bound.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import type { MeshConfig } from '../../config/mesh-schema.js';
import type { Logger } from '../../log.js';
import { connectionOptions } from '../connect.js';

/** How long an operation waits for the first connection before it fails. */
const WAIT_MS = 10_000;

/** The shared state could not be reached: a store operation failed without writing. */
export class MeshStateError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MeshStateError';
  }
}

export class MeshState {
  private nc: NatsConnection | undefined;
  private readonly connected: Promise<NatsConnection>;
  private readonly buckets = new Map<string, Promise<KV>>();
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    readonly config: MeshConfig,
    readonly log: Logger,
  ) {
    this.connected = this.connectUntilUp();
    this.connected.catch(() => {});
  }

  get node(): string {
    return this.config.node;
  }

  /** What a follower of one of the buckets does with a value it cannot take: logs it, skipped. */
  readonly skipped = (err: unknown, key: string): void => {
    this.log.warn(
      { err: (err as Error).message, key },
      'mesh state: a value that cannot be read was skipped',
    );
  };

  /** A bucket of this mesh's (`<mesh>_<name>`), made on first use; history 1, file storage. */
  bucket(name: string): Promise<KV> {
    let kv = this.buckets.get(name);
    if (!kv) {
      kv = this.connection().then((nc) =>
        createBucket(new Kvm(nc), `${this.config.name}_${name}`, {
          history: 1,
          replicas: this.config.stateReplicas,
          description: `switchboard mesh ${this.config.name}: ${name}`,
        }),
      );
      // A failed open (JetStream off, not yet reachable) is tried again on the next use.
      kv.catch(() => this.buckets.delete(name));
      this.buckets.set(name, kv);
    }
    return kv.catch((err: unknown) => {
      throw new MeshStateError(`mesh state bucket ${name} is unavailable: ${(err as Error).message}`, {
        cause: err,
      });
    });
  }

  /** The connection, once it is open (bounded wait). */
  async connection(): Promise<NatsConnection> {
    if (this.nc && !this.nc.isClosed()) return this.nc;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new MeshStateError('mesh state: NATS is not reachable yet')), WAIT_MS);
      timer.unref();
    });
    try {
      return await Promise.race([this.connected, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async connectUntilUp(): Promise<NatsConnection> {
    const options = {
      ...connectionOptions(this.config),
      name: `switchboard ${this.config.name}/${this.config.node} state`,
    };
    let warned = false;
    for (;;) {
      if (this.stopped) throw new MeshStateError('mesh state closed');
      try {
        const nc = await connect({ ...options, waitOnFirstConnect: false });
        if (this.stopped) {
          await nc.close();
          throw new MeshStateError('mesh state closed');
        }
        this.nc = nc;
        return nc;
      } catch (err) {
        if (err instanceof MeshStateError) throw err;
        if (!warned)
          this.log.warn(
            { err: (err as Error).message },
            'mesh state: NATS unreachable; shared stores wait for it',
          );
        warned = true;
        await new Promise<void>((resolve) => {
          this.retry = setTimeout(resolve, options.reconnectTimeWait ?? 250);
        });
      }
    }
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const nc = this.nc;
    this.nc = undefined;
    if (nc && !nc.isClosed()) await nc.close().catch(() => {});
  }
}

/**
 * Creates a bucket, or opens it if it exists. The client looks the bucket's stream up, then adds
 * it when it is missing; nodes starting together on a fresh server race between the two, and the
 * loser's add is refused ("subjects overlap with an existing stream", or "already in use"). Its
 * second try finds the winner's stream and opens it.
 */
export async function createBucket(
  kvm: Kvm,
  bucket: string,
  options: Parameters<Kvm['create']>[1],
): Promise<KV> {
  try {
    return await kvm.create(bucket, options);
  } catch (err) {
    const message = (err as Error).message;
    if (!/subjects overlap|already in use/.test(message)) throw err;
    return kvm.create(bucket, options);
  }
}

/** Whether a JetStream error is a compare-and-set miss (wrong last sequence, API error 10071). */
export function isWrongSequence(err: unknown): boolean {
  const e = err as { code?: unknown; api_error?: { err_code?: unknown }; message?: unknown };
  return (
    e.code === 10071 ||
    e.api_error?.err_code === 10071 ||
    (typeof e.message === 'string' && e.message.includes('wrong last sequence'))
  );
}
