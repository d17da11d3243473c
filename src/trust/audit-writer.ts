// Appends audit records to the chain. A call's arguments are checked before it runs (prepare), so
// a call that cannot be recorded is known before it reaches its target; once the turn it ended in
// has written its reply, its record is made (its arguments hashed, its fields reduced to plain
// values: the call's context is not kept) and queued, and the queue goes to the writer's own
// thread a few milliseconds later (sooner when many are queued), which chains and commits it in
// one transaction (WAL, synchronous=NORMAL: no fsync per commit). The reply goes out first, many
// calls share one commit, and no commit stalls the event loop.
import { LocalError, WireError } from '../errors/errors.js';
import type { Logger } from '../log.js';
import { callArguments, type CallContext } from '../call/context.js';
import { methodSpec, namedBy } from '../protocol/methods.js';
import {
  CanonicalJsonError,
  canonicalJson,
  canonicalProblem,
  canonicalSha256,
  sha256,
} from '../encoding/canonical-json.js';
import type { AuditEntry } from './audit-record.js';
import type { AppendResult } from './audit-append.js';
import { AuditThread } from './audit-thread.js';
import { AuditHealth } from './audit-health.js';
import type { Redactor } from '../vault/redactor.js';
import { textOf } from '../encoding/text-of.js';
import { wellFormed } from '../encoding/well-formed.js';
import { later } from '../after-turn.js';

export interface AuditOptions {
  /** Store the canonical arguments themselves, not only their hash. */
  values: boolean;
  log: Logger;
  /** How long a record may wait for others to share its commit (default 20 ms). */
  batchMs?: number;
  /** Hides vault secrets and configured patterns in what a record stores as text. */
  redactor?: Redactor | undefined;
  /** A call whose record cannot be prepared: refused (`deny`, the default) or let through. */
  onFailure?: 'deny' | 'allow';
  /** Told of the head after every commit (signed checkpoints). */
  appended?: ((seq: number, hash: string) => void) | undefined;
  /** How often a failing trail is probed (default audit-health.ts PROBE_MS). */
  probeMs?: number | undefined;
}

/** Whether a call's record can be made, worked out before the call runs. */
export interface PreparedRecord {
  /** Why the call cannot be recorded faithfully (its arguments have no canonical form). */
  problem?: string;
  /** What the record holds in place of the arguments' hash when they have none: `unrecordable:<reason>`. */
  unrecordable?: string;
  /** The problem is the trail's: its writes fail now. */
  unavailable?: boolean;
}

/** Queued records that are written at once, without waiting for the window. */
const BATCH_MAX = 512;

/** The argument hash of a record whose arguments could not be encoded, naming why. */
export const UNRECORDABLE = 'unrecordable:';

export class AuditWriter {
  private queue: AuditEntry[] = [];
  /** Records of calls that ended this turn, made once its replies are written. */
  private readonly ends = later();
  private scheduled: NodeJS.Timeout | undefined;
  private readonly thread: AuditThread;
  /** Records that could not be written since start (each was logged). */
  lost = 0;
  /** Records committed to the chain since start. */
  recordsWritten = 0;
  /** Whether the trail can be written now (audit-health.ts). */
  private readonly health: AuditHealth;

  /** Appends to the chain in the trust database at `path`. */
  constructor(
    path: string,
    private readonly options: AuditOptions,
  ) {
    this.thread = new AuditThread(path, (result, callIds) => this.written(result, callIds));
    this.health = new AuditHealth(
      (probe) => {
        this.queue.push(probe);
        this.send();
      },
      options.log,
      options.probeMs,
    );
  }

  /** Whether a call whose record cannot be prepared is refused. */
  get failsClosed(): boolean {
    return (this.options.onFailure ?? 'deny') === 'deny';
  }

  /** Why the trail cannot be written now, or undefined while its writes succeed. */
  get failing(): string | undefined {
    return this.health.failing;
  }

  /**
   * Checks that the call's arguments have a canonical form, without encoding them (they are
   * hashed with the rest of the record, after the reply has left); never throws (a failure is the
   * `problem`). While the trail's writes fail, failing closed, every call has a problem: it could
   * not be recorded (`unavailable`: the trail's fault, not the call's). Calls go through again
   * once a probe record is written (audit-health.ts).
   */
  prepare(ctx: CallContext): PreparedRecord {
    const unencodable = canonicalProblem(callArguments(ctx));
    if (unencodable) return { problem: unencodable.message, unrecordable: UNRECORDABLE + unencodable.reason };
    const failing = this.health.failing;
    if (failing !== undefined && this.failsClosed)
      return { problem: `the audit trail cannot be written: ${failing}`, unavailable: true };
    return {};
  }

  /**
   * Takes the record of a call that has ended; never throws. The record is made after the turn
   * (the call's reply leaves first: nothing a host waits for is spent on it) and queued then.
   */
  ended(ctx: CallContext, durationMs: number, error: unknown, prepared = this.prepare(ctx)): void {
    const ts = Date.now() - durationMs;
    this.ends.add(() => this.queueEntry(ctx, ts, durationMs, error, prepared));
  }

  private queueEntry(
    ctx: CallContext,
    ts: number,
    durationMs: number,
    error: unknown,
    prepared: PreparedRecord,
  ): void {
    let entry: AuditEntry;
    try {
      entry = this.entry(ctx, ts, durationMs, error, prepared);
    } catch (err) {
      this.lose([ctx.callId], err);
      return;
    }
    this.queue.push(entry);
    if (this.queue.length >= BATCH_MAX) {
      this.send();
    } else if (!this.scheduled) {
      this.scheduled = setTimeout(() => this.send(), this.options.batchMs ?? 20);
      // A pending batch must not keep the process alive; close() and process exit flush it.
      this.scheduled.unref();
    }
  }

  /** Writes what is queued and waits until it is committed (shutdown, exit, tests). */
  flush(): void {
    this.ends.flush();
    this.send();
    this.thread.drain();
  }

  /** Records ended and not yet committed: queued here or in the writer's thread (metrics). */
  get lag(): number {
    return this.queue.length + this.thread.behind;
  }

  /** Writes what is queued, then stops the writer's thread. */
  close(): void {
    this.health.stop();
    this.ends.flush();
    this.send();
    this.thread.close();
  }

  /** Hands the queue to the writer's thread without waiting. */
  private send(): void {
    clearTimeout(this.scheduled);
    this.scheduled = undefined;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.thread.post(batch);
  }

  /** A batch was committed, whole or in part. */
  private written(result: AppendResult, callIds: readonly string[]): void {
    this.recordsWritten += callIds.length - result.failed.length;
    // A probe that failed is no call's record: the trail is still failing, and that is all.
    const lost = result.failed.filter((id) => !this.health.isProbe(id));
    if (lost.length) this.lose(lost, result.error);
    if (callIds.length > 0) this.health.settled(result, callIds, this.lost);
    if (result.head) this.options.appended?.(result.head.seq, result.head.hash);
  }

  /** Counts and logs calls left without a record (the log line names them). */
  private lose(callIds: string[], err: unknown): void {
    if (callIds.length === 0) return;
    this.lost += callIds.length;
    this.options.log.error(
      {
        err: err instanceof Error ? err.message : String(err),
        records: callIds.length,
        callIds: callIds.slice(0, 20),
        lost: this.lost,
      },
      'audit write failed; these calls have no audit record',
    );
  }

  private entry(
    ctx: CallContext,
    ts: number,
    durationMs: number,
    error: unknown,
    prepared: PreparedRecord,
  ): AuditEntry {
    const redactor = this.options.redactor;
    const decided = ctx.decision;
    const target = ctx.target;
    const isToolError = !error && ctx.result?.isError === true;
    // Hashed now, not when the call started: a resource's arguments name the URI it resolved to.
    const argsSha256 = prepared.unrecordable ?? argumentsHash(callArguments(ctx));
    const keepValues = (this.options.values || decided?.auditValues === true) && !prepared.problem;
    const called = calledName(ctx);
    return {
      ts: Math.round(ts),
      callId: wellFormed(ctx.callId),
      callerKind: ctx.caller.kind,
      callerId: wellFormed(ctx.caller.id),
      // A backend names the requests it sends up (and a bridge caller its calls) as it likes.
      method: redactText(redactor, ctx.method)!,
      targetBackend: stored(target?.backend ?? null),
      // The target as it was reached: a resource's URI with the host's case the backend was sent.
      targetName: redactText(redactor, target?.sent ?? target?.name ?? called),
      // A call refused before any decision (an unknown name) is a refusal all the same.
      decision: decided?.effect ?? (error ? 'deny' : 'allow'),
      rule: stored(decided?.rule ?? (error ? refusingRule(error) : null)),
      durationMs: Math.round(durationMs * 1000) / 1000,
      outcome: error || isToolError ? 'error' : 'ok',
      errorCode: error ? errorCode(error) : isToolError ? 'tool_error' : null,
      argsSha256,
      // The hash is of what the caller sent; stored values never hold a secret.
      args: keepValues ? storedValues(callArguments(ctx), redactor) : null,
      ...whoAndWhere(ctx, redactor, called),
    };
  }
}

/** The record's who-and-where fields that are known for this call (see AuditEntry). */
function whoAndWhere(
  ctx: CallContext,
  redactor: Redactor | undefined,
  called: string | null,
): Partial<AuditEntry> {
  const out: Partial<AuditEntry> = {};
  if (called !== null) out.calledName = redactText(redactor, called)!;
  const info = ctx.reply.clientInfo;
  if (typeof info?.name === 'string') out.clientName = redactText(redactor, info.name)!;
  if (typeof info?.version === 'string') out.clientVersion = redactText(redactor, info.version)!;
  out.session = sessionDigest(ctx.reply.sessionKey);
  if (ctx.parent) out.parentCallId = wellFormed(ctx.parent.callId);
  if (ctx.run) {
    out.run = wellFormed(ctx.run.id);
    out.runFor = wellFormed(ctx.run.for);
  }
  if (ctx.mesh) {
    out.node = wellFormed(ctx.mesh.node);
    if (ctx.mesh.remoteCallId !== undefined) out.remoteCallId = wellFormed(ctx.mesh.remoteCallId);
  }
  return out;
}

/** Digests of recent sessions: a session makes many calls, and a hash per call is not free. */
const digests = new Map<string, string>();
const DIGESTS_KEPT = 4096;

/** A digest: the same session reads the same in every record, and the record cannot resume it. */
export function sessionDigest(key: string): string {
  let digest = digests.get(key);
  if (digest === undefined) {
    if (digests.size >= DIGESTS_KEPT) digests.clear();
    digest = sha256(`switchboard-session:${key}`).slice(0, 16);
    digests.set(key, digest);
  }
  return digest;
}

/** The hash of the canonical arguments, or what a record holds when they have none. */
function argumentsHash(args: unknown): string {
  try {
    return canonicalSha256(args);
  } catch (err) {
    // Checked before the call ran: only a value that changed since (a getter) gets here.
    return UNRECORDABLE + (err instanceof CanonicalJsonError ? err.reason : 'unencodable');
  }
}

/** The canonical (redacted) arguments to store; null when they cannot be encoded. */
function storedValues(raw: unknown, redactor: Redactor | undefined): string | null {
  try {
    return canonicalJson(redactor?.active ? redactor.deep(raw) : raw);
  } catch {
    return null;
  }
}

/** The name or URI an unresolved call asked for, as the caller wrote it. */
function calledName(ctx: CallContext): string | null {
  const named = namedBy(methodSpec(ctx.method), ctx.params);
  return named === undefined ? null : textOf(named);
}

/** Text as the record stores it: secrets hidden, and well-formed (see stored). */
function redactText(redactor: Redactor | undefined, text: string | null): string | null {
  return stored(text === null || !redactor ? text : redactor.text(text));
}

/**
 * Text as SQLite will hold it, so the record's hash is of what is stored: a caller's text with a
 * lone surrogate (a tool name, clientInfo) would otherwise read back changed and fail `audit verify`
 * as an edited record. Arguments need nothing: their canonical JSON escapes lone surrogates.
 */
function stored(text: string | null): string | null {
  return text === null ? null : wellFormed(text);
}

/** Which stage refused a call no policy rule decided. */
function refusingRule(err: unknown): string {
  return err instanceof LocalError && (err.code === 'unauditable' || err.code === 'audit_unavailable')
    ? 'audit'
    : 'resolve';
}

function errorCode(err: unknown): string {
  if (err instanceof WireError) return String(err.code);
  if (err instanceof LocalError) return err.code;
  return 'internal';
}
