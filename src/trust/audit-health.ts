// Whether the audit trail can be written now. A batch with a record that could not be written
// (a full disk, a lost file, a dead writer thread) marks the trail failing; only a probe written
// after that clears it: a record switchboard appends for itself every PROBE_MS while failing
// (method `audit.lost`), naming how many records were lost, since when and why, so the chain
// itself shows the gap. A refused call's own record does not clear it: it says nothing of
// whether the records of calls let through would fit.
import { canonicalJson, sha256 } from '../encoding/canonical-json.js';
import type { Logger } from '../log.js';
import type { AppendResult } from './audit-append.js';
import type { AuditEntry } from './audit-record.js';

/** How often a failing trail is tried again, with a probe record. */
export const PROBE_MS = 2_000;

/** Call ids of probe records (call ids are otherwise newCallId()'s). */
const PROBE_PREFIX = 'audit-probe-';

/** The method of the records that mark a gap in the trail. */
export const GAP_METHOD = 'audit.lost';

interface Failure {
  error: string;
  /** When the first record was lost. */
  since: number;
  /** The writer's lost count before the first one. */
  lostBefore: number;
}

export class AuditHealth {
  private failure: Failure | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The call id of the probe posted last. */
  private probeId: string | undefined;
  private probes = 0;
  /** The writer's count of lost records, as of the last batch. */
  private lost = 0;

  constructor(
    /** Queues the probe record to be written at once. */
    private readonly write: (probe: AuditEntry) => void,
    private readonly log: Logger,
    private readonly probeMs = PROBE_MS,
  ) {}

  /** Why the trail cannot be written now, or undefined while its writes succeed. */
  get failing(): string | undefined {
    return this.failure?.error;
  }

  /** Whether `callId` is a probe's: no call's record, so not counted or logged as one lost. */
  isProbe(callId: string): boolean {
    return callId.startsWith(PROBE_PREFIX);
  }

  /** A batch came back: `callIds` it held, `lost` the writer's count of lost records since. */
  settled(result: AppendResult, callIds: readonly string[], lost: number): void {
    this.lost = lost;
    if (result.failed.length > 0) {
      const error = result.error ?? 'the write failed';
      if (this.failure) this.failure.error = error;
      else this.failed(error, lost - result.failed.length);
      return;
    }
    if (this.failure && this.probeId !== undefined && callIds.includes(this.probeId)) {
      const { since } = this.failure;
      this.log.warn(
        { lost: lost - this.failure.lostBefore, since: new Date(since).toISOString() },
        'audit writes succeed again; the trail holds an audit.lost record for the gap',
      );
      this.stop();
    }
  }

  /** Stops probing (the writer closes, or the trail is written again). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.failure = undefined;
    this.probeId = undefined;
  }

  private failed(error: string, lostBefore: number): void {
    this.failure = { error, since: Date.now(), lostBefore };
    this.timer = setInterval(() => this.probe(), this.probeMs);
    // A failing trail must not keep the process alive.
    this.timer.unref();
  }

  private probe(): void {
    const f = this.failure;
    if (!f) return;
    this.probeId = `${PROBE_PREFIX}${process.pid}-${++this.probes}`;
    const args = canonicalJson({
      error: f.error,
      since: new Date(f.since).toISOString(),
      lost: this.lost - f.lostBefore,
    });
    this.write({
      ts: Date.now(),
      callId: this.probeId,
      callerKind: 'extension',
      callerId: 'switchboard',
      method: GAP_METHOD,
      targetBackend: null,
      targetName: null,
      decision: 'allow',
      rule: null,
      durationMs: 0,
      outcome: 'error',
      errorCode: 'audit_lost',
      argsSha256: sha256(args),
      args,
    });
  }
}
