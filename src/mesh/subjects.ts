// The NATS subjects of one mesh, all under its name: heartbeats (with each node's server
// announcement), leaving, messages to one node, and the inboxes answers come back to.
import { BACKEND_NAME } from '../config/backend-schema.js';
import type { SessionAnnouncement } from './pair-sessions.js';
export interface Subjects {
  heartbeat(node: string): string;
  /** Every node's heartbeats. */
  heartbeats: string;
  bye(node: string): string;
  byes: string;
  /** Messages for one node's door. */
  rpc(node: string): string;
  /** A fresh inbox of this node's, for the answers to one channel; each node answers on `<inbox>.<node>`. */
  inbox(node: string, id: string): string;
}

export function subjectsOf(mesh: string): Subjects {
  return {
    heartbeat: (node) => `${mesh}.hb.${node}`,
    heartbeats: `${mesh}.hb.*`,
    bye: (node) => `${mesh}.bye.${node}`,
    byes: `${mesh}.bye.*`,
    rpc: (node) => `${mesh}.rpc.${node}`,
    inbox: (node, id) => `${mesh}.inbox.${node}.${id}`,
  };
}

/**
 * What a node says with every heartbeat: its servers, each with a digest of its catalog; its
 * session key (signed with its node key) and the session kid it holds with each peer.
 */
export interface Announcement extends SessionAnnouncement {
  node: string;
  servers: Record<string, string>;
}

/** What a heartbeat must be before anything reads it: a node name and a flat map of servers. */
export function isAnnouncement(v: unknown): v is Announcement & { seal?: unknown } {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const a = v as { node?: unknown; servers?: unknown };
  if (typeof a.node !== 'string' || typeof a.servers !== 'object' || a.servers === null) return false;
  if (Array.isArray(a.servers)) return false;
  return Object.values(a.servers).every((digest) => typeof digest === 'string');
}

/** At most this many servers are taken from one node's heartbeat. */
export const MAX_ANNOUNCED_SERVERS = 1_000;

/**
 * The servers of a heartbeat this node can take, and the names it cannot: a server's name must
 * be one a config could give it (it becomes a backend's name here, in logs, metrics and the
 * catalog's names), its digest a short string, and there are at most MAX_ANNOUNCED_SERVERS.
 */
export function announcedServers(servers: Record<string, string>): {
  servers: Record<string, string>;
  refused: string[];
} {
  const kept: Record<string, string> = {};
  const refused: string[] = [];
  let n = 0;
  for (const [name, digest] of Object.entries(servers)) {
    if (BACKEND_NAME.test(name) && digest.length <= 64 && n < MAX_ANNOUNCED_SERVERS) {
      kept[name] = digest;
      n++;
    } else refused.push(name.slice(0, 80));
  }
  return { servers: kept, refused };
}

/** The `_meta` key of an answer from a door naming the call it ran as there (the entry node strips it). */
export const MESH_CALL_META = 'io.switchboard/mesh-call';

/**
 * `error.data.reason` of a refusal of a message MACed under a session the target no longer holds
 * (it restarted and its new key has not reached the sender): nothing was done, and the sender
 * sends the same message again signed with its node key. `error.data.assertion` is the digest of
 * the assertion refused: a refusal naming another (forged on the bus) sends nothing again.
 */
export const STALE_SESSION = 'mesh_session_stale';

/**
 * `error.data.reason` of a refusal for what the sending node is on the target (not trusted there,
 * known by another key, a clock far off): every call it sends there would be refused alike, so
 * the sender takes that node out of rotation until a probe of its own is accepted.
 */
export const NODE_REFUSED = 'mesh_node_refused';
