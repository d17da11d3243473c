// The membership subjects as this node hears them: each heartbeat and goodbye is checked (its
// shape, its subject, its seal: beats.ts) before membership and session keys hear of it, and
// nothing anyone publishes there can throw into the NATS client, which would stop reading the
// connection (calls and answers included) until it reconnected.
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../log.js';
import type { BeatChecker, BeatKind } from './beats.js';
import type { Membership } from './membership.js';
import type { PairSessions } from './pair-sessions.js';
import { announcedServers, isAnnouncement, type Subjects } from './subjects.js';

export interface MembershipFeedOptions {
  beats: BeatChecker;
  membership: Membership;
  sessions: PairSessions | undefined;
  log: Logger;
}

export function hearMembership(nc: NatsConnection, s: Subjects, o: MembershipFeedOptions): void {
  /** Refusals logged already (node, kind and reason): each is logged once. */
  const refused = new Set<string>();
  let droppedLogged = false;

  const taken = (kind: BeatKind, node: string, body: unknown, seal: unknown): boolean => {
    const why = o.beats.check(kind, node, body, seal);
    if (why === undefined) return true;
    const key = `${node}\u0000${kind}\u0000${why}`;
    if (!refused.has(key)) {
      refused.add(key);
      const message = kind === 'beat' ? 'heartbeat' : 'goodbye';
      o.log.warn({ node, message, why }, 'mesh membership message refused');
    }
    return false;
  };
  // A failure past the checks: logged the first time only, since anyone may send these.
  const dropped = (what: string, e: unknown) => {
    if (droppedLogged) return;
    droppedLogged = true;
    o.log.warn({ err: (e as Error).message }, `mesh ${what} dropped (later ones are dropped unlogged)`);
  };

  nc.subscribe(s.heartbeats, {
    callback: (err, msg) => {
      if (err) return;
      try {
        const sealed = jsonOf(msg.data);
        // A node speaks for itself only, on its own subject (NATS permissions bind those).
        const node = msg.subject.slice(s.heartbeat('').length);
        if (!isAnnouncement(sealed) || sealed.node !== node) return;
        const { seal, ...a } = sealed;
        if (!taken('beat', node, a, seal)) return;
        const { servers, refused: names } = announcedServers(a.servers);
        if (names.length > 0) {
          const key = `${node}\u0000servers\u0000${names.join('\u0000')}`;
          if (!refused.has(key)) {
            refused.add(key);
            o.log.warn(
              { node, servers: names.slice(0, 10), count: names.length },
              'mesh servers left out: names or digests this node cannot take',
            );
          }
        }
        o.membership.heard({ ...a, servers });
        o.sessions?.heard(a.node, a);
      } catch (e) {
        dropped('heartbeat', e);
      }
    },
  });
  nc.subscribe(s.byes, {
    callback: (err, msg) => {
      if (err) return;
      try {
        const node = msg.subject.slice(s.bye('').length);
        const said = jsonOf(msg.data);
        const seal =
          typeof said === 'object' && said !== null ? (said as { seal?: unknown }).seal : undefined;
        if (taken('bye', node, { node }, seal)) o.membership.left(node);
      } catch (e) {
        dropped('goodbye', e);
      }
    },
  });
}

/** The JSON a message holds; undefined for anything else (empty, not JSON). */
function jsonOf(data: Uint8Array): unknown {
  if (data.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  } catch {
    return undefined;
  }
}
