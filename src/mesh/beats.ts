// Signed membership messages: a node with a key seals each heartbeat (what it serves, its session
// key) and its goodbye with its Ed25519 key, so a client that may publish on the mesh's subjects
// can neither announce servers in a trusted node's name nor say a live node left, and a sealed
// message taken off the bus and sent again is refused (each run of a node counts its messages).
import { randomUUID, sign as edSign, verify as edVerify, type KeyObject } from 'node:crypto';
import { CanonicalJsonError, canonicalJson } from '../encoding/canonical-json.js';

/** The version of what a seal signs: changed if that ever changes. */
const SEAL_VERSION = 'switchboard-mesh-beat-1';

export type BeatKind = 'beat' | 'bye';

/** What a sealed heartbeat or goodbye carries besides its body (`seal` in the message). */
export interface BeatSeal {
  /** This run of the node (a restart is another run). */
  run: string;
  /** When the run started (ms, the node's clock): a later run of the node outranks an earlier one. */
  started: number;
  /** The message's number in its run, from 1: a number heard already is a replay. */
  seq: number;
  /** When it was sealed (ms, the node's clock). */
  at: number;
  /** Ed25519 (base64url) over the version, mesh, kind, node, the fields above and the body. */
  sig: string;
}

function signingInput(
  mesh: string,
  kind: BeatKind,
  node: string,
  s: Omit<BeatSeal, 'sig'>,
  body: unknown,
): Buffer {
  return Buffer.from(canonicalJson([SEAL_VERSION, mesh, kind, node, s.run, s.started, s.seq, s.at, body]));
}

export class BeatSealer {
  private readonly run = randomUUID();
  private seq = 0;

  constructor(
    private readonly mesh: string,
    private readonly node: string,
    private readonly key: KeyObject,
    /** When this run started (ms): now, for a node starting. */
    private readonly started = Date.now(),
  ) {}

  seal(kind: BeatKind, body: unknown): BeatSeal {
    const s = { run: this.run, started: this.started, seq: ++this.seq, at: Date.now() };
    const sig = edSign(null, signingInput(this.mesh, kind, this.node, s, body), this.key);
    return { ...s, sig: sig.toString('base64url') };
  }
}

function isSeal(v: unknown): v is BeatSeal {
  const s = v as BeatSeal | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.run === 'string' &&
    typeof s.sig === 'string' &&
    Number.isSafeInteger(s.started) &&
    Number.isSafeInteger(s.seq) &&
    Number.isSafeInteger(s.at)
  );
}

/** The last message taken from a node: its run, its number, and when this node heard it. */
interface Heard {
  run: string;
  started: number;
  seq: number;
  /** This node's clock. */
  heardAt: number;
}

/**
 * Checks the heartbeats and goodbyes of the nodes this one holds a key for (`mesh.trust`); those
 * of other nodes are refused, so no call is routed to them. A message is taken only
 * if its seal verifies and it is fresh (sealed within `maxAgeMs` of this node's clock), and:
 * - from the run last heard, its number is higher than the last one taken;
 * - from another run, that run is not one the node has left, and it started later than the run
 *   last heard or that run has been silent for `silentMs` here (a node restarted on a clock set
 *   back is heard again once its old run has gone quiet; its old run's messages are not).
 * A goodbye must come from the run last heard.
 */
export class BeatChecker {
  private readonly last = new Map<string, Heard>();
  /** Runs a node has left for a newer one, with when: their messages are refused while fresh. */
  private readonly retired = new Map<string, number>();

  constructor(
    private readonly mesh: string,
    private readonly trusted: ReadonlyMap<string, KeyObject>,
    private readonly maxAgeMs: number,
    private readonly silentMs: number,
  ) {}

  /** Undefined if the message is to be taken; else why it is refused (a fixed phrase, for the log). */
  check(kind: BeatKind, node: string, body: unknown, seal: unknown, now = Date.now()): string | undefined {
    // A node this one holds no key for is not heard at all: its servers would be called, with
    // the callers' arguments, on nothing but its word, and its answers are not signed.
    const key = this.trusted.get(node);
    if (!key) return 'not in mesh.trust: its servers are not called from here';
    if (!isSeal(seal)) return 'not sealed, though mesh.trust holds its key';
    let input: Buffer;
    try {
      input = signingInput(this.mesh, kind, node, seal, body);
    } catch (err) {
      if (err instanceof CanonicalJsonError) return 'a body with no canonical form';
      throw err;
    }
    if (!edVerify(null, input, key, Buffer.from(seal.sig, 'base64url')))
      return "seal does not verify with the node's key";
    if (Math.abs(now - seal.at) > this.maxAgeMs) return 'sealed too long ago (or ahead of this clock)';
    const prev = this.last.get(node);
    if (prev?.run === seal.run) {
      if (seal.seq <= prev.seq) return 'heard already (a replay)';
    } else {
      if (kind === 'bye') return 'a goodbye from a run not heard';
      this.forgetRetired(now);
      if (this.retired.has(seal.run)) return 'from a run the node has left';
      if (prev && seal.started <= prev.started && now - prev.heardAt <= this.silentMs)
        return 'from another run while the run heard is live';
      if (prev) this.retired.set(prev.run, now);
    }
    this.last.set(node, { run: seal.run, started: seal.started, seq: seal.seq, heardAt: now });
    return undefined;
  }

  /** Runs left longer ago than a seal stays fresh: their messages are refused as stale anyway. */
  private forgetRetired(now: number): void {
    for (const [run, at] of this.retired) if (now - at > 2 * this.maxAgeMs) this.retired.delete(run);
  }
}
