// Instances of one server beside its shared one: the legacy-era instance of a dual-era server (a
// legacy host's calls go there, so its tools may ask the host the legacy way; none under
// `share: single`, where the modern instance is translated for), and per-session instances of a
// server that asks its callers questions (a question on stdio names no call, so one instance per
// session is the only way to know whose it is).
import type { BackendConfig } from '../config/schema.js';
import { LocalError } from '../errors/errors.js';
import type { Params } from '../jsonrpc/message.js';
import { messageOf } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import type { CallContext } from '../call/context.js';
import type { Upstream } from './upstream.js';

/** The methods whose calls a backend may ask the caller something during: what a lane serves. */
const ASKING = new Set(['tools/call', 'prompts/get', 'resources/read', 'completion/complete']);
/** What a backend asks a caller; a ping is not a question about any call. */
const QUESTIONS = new Set(['sampling/createMessage', 'elicitation/create', 'roots/list']);

export interface LanesHost {
  readonly name: string;
  readonly config: BackendConfig;
  /** Whether the shared instance speaks the modern era (then legacy hosts may need a lane). */
  isModern(): boolean;
  readonly log: Logger;
  /** A new instance of the server pinned to the legacy era; `slot` tells it apart (bridge tokens). */
  make(slot: number, events: LaneEvents): Upstream;
  /** The log level the shared instance was last told, for a legacy instance that starts now. */
  logLevel(): Params | undefined;
}

/** What a lane reports, so the host can tell who asked and drop a lane that fell. */
export interface LaneEvents {
  /** The lane asked a caller something (see QUESTIONS). */
  asked(method: string): void;
  down(): void;
}

/** Whether a dual-era server was found to take a legacy session too: unknown until first needed. */
type DualVerdict = 'unknown' | 'yes' | 'no';

export class InstanceLanes {
  /** The legacy instance legacy sessions share (dual-era server, not per-session). */
  private eraLane: Promise<Upstream | undefined> | undefined;
  /** Per-session instances by session key. */
  private readonly own = new Map<string, Promise<Upstream | undefined>>();
  /** Sessions that called the shared instance before auto turned per-session: they stay on it. */
  private readonly sharing = new Set<string>();
  private dual: DualVerdict = 'unknown';
  /** auto: the shared instance asked a caller something, so sessions from now on get their own. */
  private asking = false;
  /** The lanes whose start is over, for what must be known at once (calls in flight). */
  private readonly up = new Set<Upstream>();
  private slots = 0;
  private stopped = false;

  constructor(private readonly host: LanesHost) {}

  /** How many per-session instances are running or starting. */
  get perSessionCount(): number {
    return this.own.size;
  }

  /** Every extra instance there is now (for calls in flight, log level, stop). */
  private running(): Promise<Upstream | undefined>[] {
    return [...(this.eraLane ? [this.eraLane] : []), ...this.own.values()];
  }

  /**
   * The instance a call goes to, once started, or undefined (at once, for most calls: no wait is
   * added to them) for the shared one. Only a legacy host session's
   * calls that may ask something take a lane: a modern caller's questions travel as input_required
   * results, which name their call; a call made as a task stays where its task will be looked up.
   */
  instanceFor(ctx: CallContext, method: string, params: Params): Promise<Upstream | undefined> | undefined {
    if (this.stopped || ctx.caller.kind !== 'host' || ctx.reply.era !== 'legacy') return undefined;
    if (!ASKING.has(method) || params.task !== undefined) return undefined;
    const modern = this.host.isModern();
    // A modern-only server, or one every host of either era is to share (`share: single`: one
    // process, so one state): its input_required results are translated for legacy hosts.
    if (modern && (this.dual === 'no' || this.host.config.share === 'single')) return undefined;
    const key = ctx.reply.sessionKey;
    if (this.perSession(key)) return this.sessionLane(key);
    if (!modern) {
      this.sharing.add(key);
      return undefined;
    }
    this.eraLane ??= this.startLane('legacy instance (dual-era server)', true, () => {
      this.eraLane = undefined;
    });
    return this.eraLane.then((lane) => {
      if (lane) this.sharing.add(key);
      return lane;
    });
  }

  /** Whether this session's calls go to an instance of its own. */
  private perSession(key: string): boolean {
    switch (this.host.config.share) {
      case 'shared':
      case 'single':
        return false;
      case 'per-session':
        return true;
      case 'auto':
        return this.asking && !this.sharing.has(key);
    }
  }

  private sessionLane(key: string): Promise<Upstream | undefined> {
    let lane = this.own.get(key);
    if (lane) return lane;
    const max = this.host.config.maxInstances;
    if (this.own.size >= max) {
      return Promise.reject(
        new LocalError(
          'backend_instances_exhausted',
          `Backend ${this.host.name} already runs ${max} per-session instances (maxInstances); this session cannot get one until another session ends`,
        ),
      );
    }
    // Not named by its key: an HTTP session's key is its sealed id, which works as a credential.
    lane = this.startLane('per-session instance', false, () => this.drop(key));
    this.own.set(key, lane);
    return lane;
  }

  /**
   * Starts one legacy instance. When the shared instance is modern, the first legacy start is
   * the dual-era test: a server that refuses it speaks the modern era only (the verdict holds
   * until the server's next start), and its calls from legacy hosts stay on the shared instance.
   */
  private async startLane(what: string, shared: boolean, gone: () => void): Promise<Upstream | undefined> {
    const log = this.host.log;
    const lane: Upstream = this.host.make(this.slots++, {
      asked: (method) => {
        if (shared) this.asked(method);
      },
      // A lane that fell is dropped; the next call that needs it starts a new one.
      down: () => {
        gone();
        this.up.delete(lane);
        void lane.stop();
      },
    });
    try {
      await lane.start();
    } catch (err) {
      gone();
      if (!this.host.isModern() || this.dual === 'yes') throw err;
      this.dual = 'no';
      log.info(
        { err: messageOf(err) },
        'backend takes no legacy session: modern only; legacy hosts are translated for',
      );
      return undefined;
    }
    if (this.host.isModern() && this.dual === 'unknown') {
      this.dual = 'yes';
      log.info('backend speaks both eras: legacy hosts are served by a legacy instance of it');
    }
    if (this.stopped) {
      await lane.stop();
      return undefined;
    }
    this.up.add(lane);
    const level = this.host.logLevel();
    if (level && lane.capabilities.logging) await lane.request('logging/setLevel', level).catch(() => {});
    log.info({ instance: what, perSession: this.own.size }, 'backend instance started');
    return lane;
  }

  /**
   * The shared legacy instance asked a caller something: under `share: auto` the sessions that
   * come from now on get an instance of their own.
   */
  asked(method: string): void {
    if (this.asking || !QUESTIONS.has(method) || this.host.config.share !== 'auto') return;
    this.asking = true;
    this.host.log.info(
      { method },
      'backend asks its callers questions: new host sessions get an instance of their own',
    );
  }

  /** A session ended: its own instance stops. */
  sessionEnded(key: string): void {
    this.sharing.delete(key);
    this.drop(key, true);
  }

  private drop(key: string, stop = false): void {
    const lane = this.own.get(key);
    if (!lane) return;
    this.own.delete(key);
    if (stop)
      void lane.then((l) => {
        if (l) this.up.delete(l);
        return l?.stop();
      });
  }

  /** Tells every running legacy instance what the shared one was told (the log level). */
  broadcast(method: string, params: Params | undefined): void {
    for (const lane of this.running()) {
      void lane.then((l) => l?.request(method, params).catch(() => {}));
    }
  }

  /** The calls in flight on every lane that has started. */
  callsInFlight(): CallContext[] {
    return [...this.up].flatMap((l) => l.callsInFlight());
  }

  /** The server starts anew: whether it is dual-era is found again when first needed. */
  reset(): void {
    this.stopped = false;
    if (this.dual === 'no') this.dual = 'unknown';
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const lanes = this.running();
    this.eraLane = undefined;
    this.own.clear();
    this.up.clear();
    await Promise.all(lanes.map((p) => p.then((l) => l?.stop()).catch(() => {})));
  }
}
