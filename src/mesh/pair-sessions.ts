// Session keys between pairs of nodes: each run of a node has an ephemeral X25519 key, announced
// with its heartbeat and signed with its Ed25519 node key; two nodes that have each verified the
// other's agree a pair key (X25519 + HKDF-SHA256) that only they can compute, and MAC the caller
// assertions between them with it (HS256) instead of signing each one with Ed25519.
import {
  createHash,
  createPublicKey,
  createSecretKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  sign as edSign,
  verify as edVerify,
  type KeyObject,
} from 'node:crypto';

/** The version of the key agreement: in what the binding signs, the HKDF info and the kid. */
const VERSION = 'switchboard-mesh-session/1';

/** What a node announces of its session key: signed with its Ed25519 key, for this run only. */
export interface SessionBinding {
  /** The X25519 public key of this run (raw, base64url). */
  x: string;
  /** This run's epoch: its start time (ms). A node's newer run replaces its older one, never the reverse. */
  t: number;
  /** Ed25519 signature (base64url) over the mesh, the node, `t` and `x` (bindingInput). */
  sig: string;
}

/** A pair's session, as each of its two nodes holds it. */
export interface PairSession {
  /** Names the session in an assertion's header: a digest of both public keys, in node order. */
  kid: string;
  /** The pair key (HMAC-SHA256). */
  key: KeyObject;
  /** The protected header of the assertions MACed under it, encoded once. */
  header: string;
}

/** What a node's announcement says of its sessions: its binding, and the kid it holds per peer. */
export interface SessionAnnouncement {
  kx?: SessionBinding | undefined;
  sessions?: Record<string, string> | undefined;
}

export const ASSERTION_TYP = 'switchboard-mesh+jws';

function bindingInput(mesh: string, node: string, t: number, x: string): Buffer {
  return Buffer.from(`${VERSION}\n${mesh}\n${node}\n${t}\n${x}`);
}

/** A peer as last heard: its verified binding (if any), and the kid it says it holds with this node. */
interface Peer {
  /** The newest epoch verified for it: an older or equal one is never taken again. */
  t: number;
  sig: string;
  session: PairSession | undefined;
  /** The kid the peer announced for this node: until it matches ours, we sign with Ed25519. */
  acked: string | undefined;
}

export class PairSessions {
  private readonly own = generateKeyPairSync('x25519');
  private readonly x: string;
  /** This run's binding, signed once at start. */
  readonly binding: SessionBinding;
  private readonly peers = new Map<string, Peer>();
  /** The last binding refused per node: the same one again is neither verified nor reported again. */
  private readonly lastRefused = new Map<string, string>();

  constructor(
    private readonly mesh: string,
    private readonly node: string,
    nodeKey: KeyObject,
    private readonly trusted: ReadonlyMap<string, KeyObject>,
    /** Told of a binding refused (not signed by the node's trusted key, or an older run's). */
    private readonly refused: (node: string, why: string) => void = () => {},
  ) {
    this.x = this.own.publicKey.export({ format: 'jwk' }).x!;
    const t = Date.now();
    const sig = edSign(null, bindingInput(mesh, node, t, this.x), nodeKey).toString('base64url');
    this.binding = { x: this.x, t, sig };
  }

  /** The kids this node holds, by peer: what its announcements acknowledge. */
  acks(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [node, p] of this.peers) if (p.session) out[node] = p.session.kid;
    return out;
  }

  /**
   * A peer's announcement. A new binding is verified (once: the same one again costs a string
   * compare) against the peer's trusted Ed25519 key; a valid one of a newer run replaces the
   * session with that peer, so assertions under the old kid are refused from then on.
   */
  heard(node: string, a: SessionAnnouncement): void {
    if (node === this.node || !this.trusted.has(node)) return;
    let peer = this.peers.get(node);
    const b = a.kx;
    if (isBinding(b) && b.sig !== peer?.sig && b.sig !== this.lastRefused.get(node)) {
      if (peer && b.t <= peer.t) this.refuse(node, b, 'a session key of an older or the same run');
      else {
        const session = this.derive(node, b);
        if (session) {
          this.lastRefused.delete(node);
          peer = { t: b.t, sig: b.sig, session, acked: undefined };
          this.peers.set(node, peer);
        }
      }
    }
    if (!peer) return;
    const kid = isRecord(a.sessions) ? a.sessions[this.node] : undefined;
    peer.acked = typeof kid === 'string' ? kid : undefined;
  }

  /** The session to MAC an assertion to `node` with: only once that node said it holds it too. */
  sending(node: string): PairSession | undefined {
    const p = this.peers.get(node);
    return p?.session && p.acked === p.session.kid ? p.session : undefined;
  }

  /** `node` refused our MAC as stale (it restarted): Ed25519 until its next acknowledgement. */
  refusedBy(node: string): void {
    const p = this.peers.get(node);
    if (p) p.acked = undefined;
  }

  /** The session an HS256 assertion from `node` must name: the one derived from its newest binding. */
  receiving(node: string): PairSession | undefined {
    return this.peers.get(node)?.session;
  }

  private refuse(node: string, b: SessionBinding, why: string): undefined {
    this.lastRefused.set(node, b.sig);
    this.refused(node, why);
  }

  private derive(node: string, b: SessionBinding): PairSession | undefined {
    const key = this.trusted.get(node)!;
    let peerKey: KeyObject;
    try {
      const ok = edVerify(
        null,
        bindingInput(this.mesh, node, b.t, b.x),
        key,
        Buffer.from(b.sig, 'base64url'),
      );
      if (!ok) return this.refuse(node, b, `a session key not signed with node ${node}'s key`);
      peerKey = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: b.x }, format: 'jwk' });
    } catch {
      return this.refuse(node, b, 'a session key that is not an X25519 public key');
    }
    try {
      return pairSession(this.node, this.x, this.own.privateKey, node, b.x, peerKey);
    } catch {
      return this.refuse(node, b, 'a session key no pair key can be agreed with');
    }
  }
}

/** The pair key and its kid; both nodes compute the same from their own private and the other's public key. */
export function pairSession(
  self: string,
  selfX: string,
  privateKey: KeyObject,
  peer: string,
  peerX: string,
  peerKey: KeyObject,
): PairSession {
  const shared = diffieHellman({ privateKey, publicKey: peerKey });
  const [first, second] =
    self < peer
      ? [
          [self, selfX],
          [peer, peerX],
        ]
      : [
          [peer, peerX],
          [self, selfX],
        ];
  const names = `${first![0]}\n${first![1]}\n${second![0]}\n${second![1]}`;
  const info = Buffer.from(`${VERSION}\n${names}`);
  const key = createSecretKey(Buffer.from(hkdfSync('sha256', shared, Buffer.alloc(0), info, 32)));
  const kid = createHash('sha256').update(`${VERSION}\n${names}`).digest('base64url').slice(0, 22);
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: ASSERTION_TYP, kid })).toString('base64url');
  return { kid, key, header };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isBinding(v: unknown): v is SessionBinding {
  return (
    isRecord(v) &&
    typeof v.x === 'string' &&
    typeof v.sig === 'string' &&
    typeof v.t === 'number' &&
    Number.isFinite(v.t)
  );
}
