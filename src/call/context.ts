// What one call carries through the pipeline, whoever made it: a host, a backend over the bridge,
// or a workflow. Stages read and fill it; the caller's side is reached only through `reply`.
import type { Params, RequestId, Result } from '../jsonrpc/message.js';
import type { Target } from '../catalog/catalog.js';
import { logLevelRank, type LogLevel } from '../protocol/versions.js';
import type { ModernWire } from '../protocol/envelope.js';
import { argumentsOf, type TargetKind } from '../protocol/methods.js';

export type { TargetKind };

export type Caller =
  | { kind: 'host'; id: string }
  | { kind: 'backend'; id: string }
  | { kind: 'workflow'; id: string }
  | { kind: 'extension'; id: string }
  /** An operator through the admin API (`admin:token`, `admin:<key name>`): judged like a host by default. */
  | { kind: 'admin'; id: string }
  // An A2A client of switchboard as an agent (a2a.serve), by the identity it proved to the HTTP front.
  | { kind: 'agent'; id: string };

/** Every kind of caller there is: what a caller's name read back from text (`kind:id`) may start with. */
export const CALLER_KINDS: ReadonlySet<string> = new Set<Caller['kind']>([
  'host',
  'backend',
  'workflow',
  'extension',
  'admin',
  'agent',
]);

/** The way back to the caller for everything a call produces before its result. */
export interface Reply {
  /** The caller's session; two calls with the same key came from the same session. */
  readonly sessionKey: string;
  /** Capabilities the caller declared (sampling, elicitation, roots, ...). */
  readonly capabilities: Record<string, unknown>;
  /**
   * The wire the caller speaks: `legacy` (a session opened by initialize) or `modern` (stateless
   * requests that carry their own `_meta`). It decides how a backend's questions reach the caller.
   */
  readonly era: 'legacy' | 'modern';
  /** Who the caller says it is (initialize's clientInfo, or the request's `_meta` clientInfo). */
  readonly clientInfo?: Record<string, unknown> | undefined;
  /**
   * The log level the caller asked for: its session's (logging/setLevel) or the request's own
   * (`_meta` logLevel). A modern caller without one gets no log lines; a legacy one gets all.
   */
  readonly logLevel?: string | undefined;
  /** A notification that belongs to this call (progress, a log line during it). */
  notify(method: string, params: Params): void;
  /**
   * Whether the call is waiting for the caller to answer something it was asked (a modern caller
   * between an input_required and its retry): such a call is not the one a backend's next message
   * is about.
   */
  waiting?(): boolean;
  /** Ends the call with `error` at once (a modern call missing a capability); returns `error`. */
  refuse?(error: Error): Error;
  /** A request to the caller on behalf of this call (sampling, elicitation, roots). */
  request(method: string, params: Params | undefined, signal: AbortSignal): Promise<Result>;
  /**
   * The caller's legacy session, for the housekeeping only a session has (its handshake, its log
   * level); absent for modern and in-process callers.
   */
  readonly session?: SessionControl | undefined;
  /**
   * The catalog profile the caller came through (`/mcp/<profile>`, `up --stdio --profile`): what
   * the view stage shows it. Undefined: the default view.
   */
  readonly view?: string | undefined;
}

/** What housekeeping calls set on the session they came by. */
export interface SessionControl {
  /** Settles the handshake; returns the protocol version agreed. */
  initialize(params: Params): string;
  setLogLevel(level: LogLevel): void;
}

/** Whether a log line at `level` goes to the caller. */
export function wantsLog(reply: Reply, level: unknown): boolean {
  if (reply.logLevel === undefined) return reply.era === 'legacy';
  return logLevelRank(level) >= logLevelRank(reply.logLevel);
}

export interface CallContext {
  /** Unique per call within this process; names the call in logs, events and audit. */
  readonly callId: string;
  readonly caller: Caller;
  readonly method: string;
  /** The JSON-RPC id the caller gave the request, when it came off a wire. */
  readonly requestId?: RequestId | undefined;
  /** As the caller sent them; stages may replace (never mutate) them. */
  params: Params;
  /** Aborts when the caller cancels, or when the call this one was made for is cancelled. */
  signal: AbortSignal;
  /**
   * Ends the call apart from a cancellation (a stop's deadline): aborts `signal` with `reason`, and
   * the door still answers the caller with the error the call ends with. Given by the door that
   * owns the signal; undefined where it gave none.
   */
  readonly cut?: ((reason: Error) => void) | undefined;
  readonly reply: Reply;
  /** Backends the call passed through before reaching its target (empty for a host's call). */
  path: readonly string[];
  readonly startedAt: number;
  /**
   * Set by the resolve stage for calls that have one owning backend. A task's `subject` is the name
   * the call that created it was made to: what grants judge calls on the task by.
   */
  target?: (Target & { kind: TargetKind; subject?: string }) | undefined;
  /**
   * The backend a retried call must reach again: a modern caller's retry after `input_required`
   * carries it sealed in `requestState`; the route stage refuses any other owner.
   */
  resume?: { backend: string; replica?: number | undefined } | undefined;
  /** Set by the route stage: which replica of its backend the call was sent to (from 0). */
  replica?: number | undefined;
  /** Set by the route stage. */
  result?: Result | undefined;
  /**
   * The call this one was made while serving: set by the factory for a handler's sub-call and a
   * backend's question on the way back, and by the chain stage for a bridge call when switchboard
   * can vouch for it.
   */
  parent?: CallContext | undefined;
  /**
   * A backend's question on its way back to a caller (sampling, elicitation, roots, ping): the
   * return path. Only the return path makes such calls; the same methods from any door are unknown.
   */
  readonly returning?: boolean | undefined;
  /**
   * A refusal the door established before the call could run (a forged or expired requestState):
   * the protocol stage gives it, so it is observed and audited like any other refusal.
   */
  readonly refusal?: Error | undefined;
  /** What a modern request came with besides its body (its HTTP headers), for the protocol stage. */
  readonly wire?: ModernWire | undefined;
  /** The workflow run this call is a step of, and who the run is for (`host:stdio`): audit names both. */
  readonly run?: RunOf | undefined;
  /** What decided whether the call may go on, and which rule did: what the audit record names. */
  decision?: Decision | undefined;
  /**
   * The other node of a call that crossed the mesh, and its call id there: on the target node,
   * the entry node (set by the door); on the entry node, the node that served it (set once sent).
   */
  mesh?: { node: string; remoteCallId?: string | undefined } | undefined;
}

/** What a workflow step's call carries of its run (set by the workflow engine; its sub-calls inherit it). */
export interface RunOf {
  id: string;
  /** The outermost caller the run is for, as `kind:id`. */
  for: string;
  /**
   * Whose grants the policy stage judges the step by: the workflow's own (the default), only the
   * caller's the run is for, or both (docs/workflows.md#whose-grants).
   */
  grants?: 'workflow' | 'caller' | 'both' | undefined;
  /** The step's id, for a refusal that names it. */
  step?: string | undefined;
}

export interface Decision {
  /** approve: allowed once a human accepted it (the approval stage asks). */
  effect: 'allow' | 'deny' | 'approve';
  /** The rule that decided: a policy rule's name, `defaults.host`, `servers.x.bridge.allow`, `chain.cycle`. */
  rule: string;
  /** The deciding rule asks for the arguments' values in the audit record. */
  auditValues?: boolean | undefined;
}

// The process and the time it began numbering, once: a counter alone then tells calls apart, and
// the prefix tells this process's calls from those of an earlier one with the same pid.
const CALL_ID_PREFIX = `${process.pid.toString(36)}-${Date.now().toString(36)}-`;
let counter = 0;
export function newCallId(): string {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return CALL_ID_PREFIX + counter.toString(36);
}

/**
 * What the call asks its target, as the target is sent it (see `argumentsOf` in
 * protocol/methods.ts): a resolved resource by its owner's own URI, the host's case as the caller
 * wrote it. An approval is bound to this and the audit records it: what was reached, exactly.
 */
export function callArguments(ctx: CallContext): unknown {
  const t = ctx.target;
  return argumentsOf(ctx.method, ctx.params, t?.kind === 'resource' ? (t.sent ?? t.name) : undefined);
}

/**
 * What the policy's argument conditions judge: as callArguments, but a resource's URI in the
 * normal form rules are written in (host lower-cased), so no case of a host escapes a condition.
 */
export function judgedArguments(ctx: CallContext): unknown {
  return argumentsOf(ctx.method, ctx.params, ctx.target?.kind === 'resource' ? ctx.target.name : undefined);
}
