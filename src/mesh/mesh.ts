// This node in the mesh: its NATS connection, its heartbeat (which announces its servers), the
// door other nodes' calls come in by, and the other nodes' servers brought into the gateway as
// backends whose channel crosses the mesh (mesh-remotes.ts). Naming: a remote server keeps its name, unless this
// node has a server of that name: then each node's copy is `<node>.<server>` (docs/mesh.md).
import { createHash, type KeyObject } from 'node:crypto';
import { connect, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import type { MeshConfig } from '../config/mesh-schema.js';
import type { Gateway } from '../gateway/gateway.js';
import type { Logger } from '../log.js';
import { AssertionSigner, AssertionVerifier, privateKeyOf, publicKeyOf } from './assertion.js';
import { BeatChecker, BeatSealer } from './beats.js';
import { connectionOptions } from './connect.js';
import { MeshDoor } from './door.js';
import { Membership } from './membership.js';
import { PairSessions } from './pair-sessions.js';
import { hearMembership } from './membership-feed.js';
import { MeshRemotes } from './mesh-remotes.js';
import { subjectsOf, type Announcement, type Subjects } from './subjects.js';

/** How long a stop waits for a try to connect to NATS under way to end. */
const CONNECT_WAIT_MS = 1_000;

/** A key read from config, its error naming the setting it came from. */
function keyOf(setting: string, value: string, read: (value: string) => KeyObject): KeyObject {
  try {
    return read(value);
  } catch (err) {
    throw new Error(`${setting}: ${(err as Error).message}`, { cause: err });
  }
}

export class Mesh {
  readonly subjects: Subjects;
  private nc: NatsConnection | undefined;
  private readonly membership: Membership;
  private door: MeshDoor | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  /** The other nodes' servers, as backends here. */
  private readonly remotes: MeshRemotes;
  private readonly signer: AssertionSigner | undefined;
  private readonly verifier: AssertionVerifier;
  /** Session keys with the other nodes (only with a node key of its own: it signs the announced key). */
  private readonly sessions: PairSessions | undefined;
  /** Seals this node's heartbeats and goodbye (with a node key), and checks those of trusted nodes. */
  private readonly sealer: BeatSealer | undefined;
  private readonly beats: BeatChecker;
  /** This node's NATS connection is down (between a disconnect and the reconnect). */
  private natsLost = false;
  /** Membership changes are applied one at a time, in order. */
  private applying: Promise<void> = Promise.resolve();
  private stopped = false;
  /** The first connection being sought; a pause between tries. */
  private connecting: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** Ends the wait between two tries to connect. */
  private wake: (() => void) | undefined;

  constructor(
    private readonly config: MeshConfig,
    private readonly gateway: Gateway,
    private readonly log: Logger,
  ) {
    this.subjects = subjectsOf(config.name);
    this.membership = new Membership(config.node, config.heartbeatMs);
    const trusted = new Map<string, KeyObject>(
      Object.entries(config.trust).map(([node, key]) => [
        node,
        keyOf(`mesh.trust.${node}`, key, publicKeyOf),
      ]),
    );
    const key = config.key ? keyOf('mesh.key', config.key, privateKeyOf) : undefined;
    this.sessions = key
      ? new PairSessions(config.name, config.node, key, trusted, (node, why) =>
          this.log.warn({ node, why }, 'mesh session key announcement ignored'),
        )
      : undefined;
    this.signer = key
      ? new AssertionSigner(config.node, key, config.assertionTtlSeconds, this.sessions)
      : undefined;
    this.verifier = new AssertionVerifier(config.node, trusted, this.sessions);
    this.sealer = key ? new BeatSealer(config.name, config.node, key) : undefined;
    // As fresh as an assertion must be, and never less than a few heartbeats.
    const maxAgeMs = Math.max(config.assertionTtlSeconds * 1000, 10 * config.heartbeatMs);
    // A run silent for as long as makes a node down here may give way to another run of it.
    this.beats = new BeatChecker(config.name, trusted, maxAgeMs, 3 * config.heartbeatMs);
    this.remotes = new MeshRemotes({
      node: config.node,
      subjects: this.subjects,
      gateway,
      membership: this.membership,
      signer: this.signer,
      heartbeatMs: config.heartbeatMs,
      log,
      lostWhy: () => this.lostWhy(),
    });
  }

  get node(): string {
    return this.config.node;
  }

  /** The other nodes heard from lately (alive), by name. */
  liveNodes(): string[] {
    return [...this.membership.live.keys()];
  }

  /**
   * Joins the mesh without waiting for NATS: a node whose NATS server is unreachable at start
   * serves its own servers, and joins once a connection opens (tried again and again until then).
   */
  async start(): Promise<void> {
    const options = connectionOptions(this.config); // a bad credentials file fails the start
    this.connecting = this.connectUntilJoined(options);
  }

  /** Whether this node has a NATS connection now (false before the first one opens). */
  get connected(): boolean {
    return this.nc !== undefined && !this.nc.isClosed();
  }

  private async connectUntilJoined(options: ConnectionOptions): Promise<void> {
    let warned = false;
    while (!this.stopped) {
      try {
        const nc = await connect({ ...options, waitOnFirstConnect: false });
        if (this.stopped) return void (await nc.close());
        return this.joined(nc);
      } catch (err) {
        if (!warned)
          this.log.warn(
            { err: (err as Error).message, servers: this.config.servers },
            'mesh NATS unreachable; serving local servers, joining when it answers',
          );
        warned = true;
        // The wait before the next try ends at once when the node stops (wake).
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          this.retry = setTimeout(resolve, options.reconnectTimeWait ?? 250);
        });
      }
    }
  }

  private joined(nc: NatsConnection): void {
    this.nc = nc;
    this.remotes.connected(nc);
    const s = this.subjects;
    this.door = new MeshDoor({
      nc,
      subjects: s,
      self: this.config.node,
      gateway: this.gateway,
      verifier: this.verifier,
      isLocal: (server) => !this.gateway.remotes.has(server) && this.gateway.backends.has(server),
      log: this.log,
    });
    this.door.start();
    hearMembership(nc, s, {
      beats: this.beats,
      membership: this.membership,
      sessions: this.sessions,
      log: this.log,
    });
    this.membership.onChange((change) => {
      this.remotes.nodesDown(change.down);
      this.applying = this.applying
        .then(() => this.remotes.apply())
        .catch((e: unknown) => {
          this.log.error({ err: (e as Error).message }, 'mesh catalog update failed');
        });
    });
    this.membership.start();
    void this.watchStatus(nc);
    this.announce();
    this.heartbeat = setInterval(() => this.announce(), this.config.heartbeatMs);
    this.heartbeat.unref();
    this.log.info({ node: this.config.node, mesh: this.config.name }, 'joined the mesh');
    if (this.config.key === undefined || Object.keys(this.config.trust).length === 0)
      this.log.warn(
        { node: this.config.node },
        'mesh.key or mesh.trust is not set: this node neither calls nor serves other nodes (docs/mesh.md)',
      );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    this.wake?.();
    // A connection still being tried is closed by the loop when it opens; the stop waits for it
    // no longer than CONNECT_WAIT_MS (an address that never answers holds a try for its timeout).
    await Promise.race([
      this.connecting,
      new Promise((resolve) => setTimeout(resolve, CONNECT_WAIT_MS).unref()),
    ]);
    clearInterval(this.heartbeat);
    this.membership.stop();
    await this.remotes.stop();
    this.door?.stop();
    const nc = this.nc;
    if (!nc) return;
    try {
      const node = this.config.node;
      const bye = this.sealer ? JSON.stringify({ seal: this.sealer.seal('bye', { node }) }) : '';
      nc.publish(this.subjects.bye(node), bye);
      await nc.flush();
    } catch {
      /* leaving anyway */
    }
    await this.applying;
    await this.remotes.removeAll(`node ${this.config.node} left the mesh`);
    await nc.close();
  }

  /** What this node serves: its own servers, each with a digest of what it lists. */
  private announcement(): Announcement {
    const servers: Record<string, string> = {};
    for (const [name, b] of this.gateway.backends) {
      if (this.gateway.remotes.has(name) || b.state !== 'ready') continue;
      const lists = this.gateway.catalog.servedBy(name);
      servers[name] = createHash('sha256').update(JSON.stringify(lists)).digest('base64url').slice(0, 16);
    }
    const sessions = this.sessions && { kx: this.sessions.binding, sessions: this.sessions.acks() };
    return { node: this.config.node, servers, ...sessions };
  }

  private announce(): void {
    if (this.stopped || !this.nc || this.nc.isClosed()) return;
    try {
      const a = this.announcement();
      const seal = this.sealer?.seal('beat', a);
      this.nc.publish(this.subjects.heartbeat(this.config.node), JSON.stringify(seal ? { ...a, seal } : a));
    } catch {
      /* disconnected: the client buffers or drops; the next beat tries again */
    }
  }

  /** Logs the connection's changes; while NATS is away other nodes fall silent and go down here. */
  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect')
        this.log.warn({ status: s.type, node: this.config.node }, 'mesh connection');
      if (s.type === 'disconnect' || s.type === 'staleConnection') this.natsLost = true;
      if (s.type === 'reconnect') {
        this.natsLost = false;
        this.announce();
      }
    }
  }

  /**
   * Why every other node falls silent at once, when it is this node that lost NATS: said so, so
   * that an operator does not go looking at nodes that are fine.
   */
  private lostWhy(): string | undefined {
    return this.natsLost ? `this node (${this.config.node}) lost its connection to NATS` : undefined;
  }
}
