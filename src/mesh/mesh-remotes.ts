// The other nodes' servers as backends of this gateway: brought in and taken out as the live nodes
// announce them, each over channels whose calls cross the mesh to a node serving it; and the nodes
// that refuse this node's calls, kept out of rotation and probed until they take them again.
import type { NatsConnection } from '@nats-io/transport-node';
import { HttpBackend } from '../config/schema.js';
import type { Gateway } from '../gateway/gateway.js';
import type { RemoteNode } from '../gateway/remote-backends.js';
import type { Logger } from '../log.js';
import type { AssertionSigner } from './assertion.js';
import type { Membership } from './membership.js';
import { MeshChannel } from './mesh-channel.js';
import { NodeRefusals, type ProbeResult } from './node-refusals.js';
import { leftBecause, wantedServers, type Remote, type Wanted } from './remote-servers.js';
import type { Subjects } from './subjects.js';

export interface MeshRemotesOptions {
  /** This node. */
  node: string;
  subjects: Subjects;
  gateway: Gateway;
  membership: Membership;
  signer: AssertionSigner | undefined;
  heartbeatMs: number;
  log: Logger;
  /** Why every other node fell silent at once, when it is this node that lost NATS. */
  lostWhy(): string | undefined;
}

export class MeshRemotes {
  private readonly remotes = new Map<string, Remote>();
  /** Nodes that refuse this node's calls, kept out of rotation until a probe is accepted. */
  private readonly refusals: NodeRefusals;
  /** Channels opened for a probe alone (no channel of the node's servers was open): closed at stop. */
  private readonly probing = new Set<MeshChannel>();
  private nc: NatsConnection | undefined;
  private stopped = false;

  constructor(private readonly o: MeshRemotesOptions) {
    // Probed a few heartbeats apart: soon back once mended, without a ping per call meanwhile.
    const probeMs = Math.max(1_000, 10 * o.heartbeatMs);
    this.refusals = new NodeRefusals({
      probe: (node) => this.probe(node, probeMs),
      probeMs,
      log: o.log,
      accepts: (node) => {
        for (const name of this.remotes.keys())
          if (this.nodesFor(name).includes(node))
            o.gateway.remotes.retryNow(name, `mesh node ${node} accepts this node's calls again`);
      },
      refuses: (node) => {
        for (const name of this.remotes.keys()) {
          const nodes = this.nodesFor(name);
          if (nodes.includes(node) && nodes.some((n) => !this.refusals.refuses(n)))
            o.gateway.remotes.retryNow(
              name,
              `mesh node ${node} refuses this node's calls; another serves it`,
            );
        }
      },
    });
  }

  /** The connection channels are opened on, once this node has one. */
  connected(nc: NatsConnection): void {
    this.nc = nc;
  }

  /** Nodes went down: refused or not, they start afresh; what they held fails now, naming them. */
  nodesDown(nodes: readonly string[]): void {
    for (const node of nodes) this.refusals.forget(node);
    if (nodes.length) for (const r of this.remotes.values()) this.failLost(r);
  }

  /** Brings the gateway's remote servers in line with what the live nodes announce. */
  async apply(): Promise<void> {
    // A turn first, so the calls a lost node held have failed with its name before its servers go.
    await new Promise((resolve) => setImmediate(resolve));
    if (this.stopped || !this.nc) return;
    const { gateway, log } = this.o;
    const wanted = this.wanted();
    for (const name of [...this.remotes.keys()]) {
      if (wanted.has(name)) continue;
      const gone = this.remotes.get(name)!;
      this.failLost(gone);
      this.remotes.delete(name);
      const why = leftBecause(gone, this.alive, this.o.lostWhy());
      log.warn({ name, server: gone.server, nodes: gone.nodes, why }, 'mesh server left the catalog');
      await gateway.remotes.remove(name, why);
    }
    for (const [name, w] of wanted) {
      const have = this.remotes.get(name);
      if (have) {
        const more = w.nodes.filter((n) => !have.nodes.includes(n));
        have.nodes = w.nodes;
        if (more.length) gateway.remotes.retryNow(name, `mesh node ${more.join(', ')} serves it now`);
        if (have.digest !== w.digest) {
          have.digest = w.digest;
          for (const ch of have.channels) ch.listChanged();
        }
        continue;
      }
      const remote: Remote = { ...w, channels: new Set() };
      this.remotes.set(name, remote);
      const config = HttpBackend.parse({
        url: `http://mesh.invalid/${encodeURIComponent(name)}`,
        era: 'modern',
      });
      await gateway.remotes.add(
        name,
        config,
        () => {
          const channel: MeshChannel = this.channelTo(
            w.server,
            () => this.nodesFor(name),
            () => remote.channels.delete(channel),
          );
          remote.channels.add(channel);
          return channel;
        },
        () => this.nodeViews(name, remote),
      );
      log.info({ name, server: w.server, nodes: w.nodes }, 'mesh server joined the catalog');
    }
  }

  /** No more probes or changes (this node is leaving). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.refusals.stop();
    for (const channel of this.probing) await channel.close();
  }

  /** Every remote server leaves the gateway (`why`). */
  async removeAll(why: string): Promise<void> {
    for (const name of [...this.remotes.keys()]) await this.o.gateway.remotes.remove(name, why);
    this.remotes.clear();
  }

  private readonly alive = (node: string): boolean => this.o.membership.alive(node);

  /** What a server's channels hold on nodes no longer alive fails now, naming them. */
  private failLost(r: Remote): void {
    for (const ch of r.channels) ch.nodesDown(this.alive, this.o.lostWhy() ?? 'it stopped answering');
  }

  /** The remote servers by the name they get here, and the nodes serving each. */
  private wanted(): Map<string, Wanted> {
    const { gateway } = this.o;
    const local = (name: string) => !gateway.remotes.has(name) && Object.hasOwn(gateway.config.servers, name);
    return wantedServers(this.o.membership.live.values(), local);
  }

  private nodesFor(name: string): string[] {
    const r = this.remotes.get(name);
    if (!r) return [];
    const { membership } = this.o;
    if (r.only) return membership.alive(r.only) ? [r.only] : [];
    return [...membership.live.values()].filter((n) => Object.hasOwn(n.servers, r.server)).map((n) => n.node);
  }

  /** The nodes serving a remote server, for status: whether each takes this node's calls, and its load. */
  private nodeViews(name: string, remote: Remote): RemoteNode[] {
    return this.nodesFor(name).map((node) => ({
      node,
      state: this.refusals.refuses(node) ? 'refusing' : 'serving',
      outstanding: [...remote.channels].reduce((n, ch) => n + ch.inFlight(node), 0),
    }));
  }

  /**
   * Pings `node` on a channel of a server it serves: an open one, or one opened for the probe when
   * none is (the server may have failed to start because this node refused it). A node serving
   * nothing here is not kept out.
   */
  private async probe(node: string, withinMs: number): Promise<ProbeResult> {
    let server: string | undefined;
    for (const [name, r] of this.remotes) {
      if (!this.nodesFor(name).includes(node)) continue;
      const channel = r.channels.values().next().value;
      if (channel) return channel.probe(node, withinMs);
      server = r.server;
    }
    if (server === undefined || !this.nc || this.stopped) return { accepted: true };
    const channel = this.channelTo(server, () => [node]);
    this.probing.add(channel);
    try {
      await channel.start();
      return await channel.probe(node, withinMs);
    } finally {
      this.probing.delete(channel);
      await channel.close();
    }
  }

  /** A channel to `server` on the nodes `nodes` gives (those serving it now). */
  private channelTo(server: string, nodes: () => string[], closed?: () => void): MeshChannel {
    return new MeshChannel({
      nc: this.nc!,
      subjects: this.o.subjects,
      self: this.o.node,
      server,
      nodes,
      signer: this.o.signer,
      refusals: this.refusals,
      log: this.o.log,
      closed,
    });
  }
}
