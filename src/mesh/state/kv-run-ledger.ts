// Workflow runs shared by the mesh's nodes in a JetStream KV bucket: `r.<run>` its record,
// `s.<run>.<step>` each step's outcome (written before the step's call is made, so a step under way
// is known to be), and `l.<run>` its lease, renewed by the process running it: a run belongs to the
// process its lease names. Every write of a lease is conditioned on its KV revision, so of the nodes
// that see a lease unrenewed for mesh.leaseMs (each by its own clock, so no two clocks are
// compared) and take it, one wins.
// `c.<run>` asks for the run's cancellation from any node: the node holding the run follows these
// keys and stops it (at once, or as it takes the run over).
import { randomUUID } from 'node:crypto';
import type { KV, KvEntry } from '@nats-io/kv';
import type { RunRow, RunStatus, StepRow, StepStatus } from '../../workflows/run-store.js';
import type { SharedRuns } from '../../workflows/shared-runs.js';
import { followBucket, type Following } from './follow-bucket.js';
import { isWrongSequence, type MeshState } from './mesh-state.js';

const stepKey = (run: string, step: string) => `s.${run}.${Buffer.from(step).toString('base64url')}`;
const enc = (v: unknown) => JSON.stringify(v);

interface Seen {
  revision: number;
  holder: string;
  /** When this node saw this revision (its own clock). */
  seenAt: number;
}

export class KvRunLedger implements SharedRuns {
  /** This process: a node restarted under the same name is another holder. */
  private readonly holder: string;
  /** Runs this process holds, with their lease's revision. */
  private readonly owned = new Map<string, number>();
  /** The revision of each step outcome this process wrote or read. */
  private readonly stepRevisions = new Map<string, number>();
  private readonly leases = new Map<string, Seen>();
  private follow: Following | undefined;
  private followCancels: Following | undefined;
  /** Runs some node asked to cancel (their `c.<run>` key is there). */
  private readonly cancels = new Set<string>();
  private cancelled: ((run: string) => void) | undefined;
  private lost: ((run: string) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private renewal: NodeJS.Timeout | undefined;
  private closed = false;
  private scanning = false;
  private renewingNow = false;

  constructor(private readonly state: MeshState) {
    this.holder = `${state.node}/${randomUUID()}`;
  }

  private get leaseMs(): number {
    return this.state.config.leaseMs;
  }

  private kv(): Promise<KV> {
    return this.state.bucket('runs');
  }

  async created(row: RunRow): Promise<void> {
    const kv = await this.kv();
    await kv.put(`r.${row.id}`, enc(row));
    this.owned.set(row.id, await kv.create(`l.${row.id}`, this.holder));
    this.renewing();
    // A cancel asked once the record was there, but heard before this node held the lease, was
    // not this node's to act on then: it is now.
    if (this.cancels.has(row.id)) this.cancelled?.(row.id);
  }

  async stepStarted(run: string, step: string, attempts: number): Promise<void> {
    const kv = await this.kv();
    // Held means the lease names this process. Its revision is no test: this process's own renewal
    // may be on its way (the read can see the new revision before the renewal's answer is in).
    if (!this.owned.has(run) || !this.names(await kv.get(`l.${run}`))) {
      this.release(run);
      throw new Error(`run ${run} was taken over by another node`);
    }
    const key = stepKey(run, step);
    const row: StepRow = {
      step,
      status: 'started',
      output: undefined,
      error: null,
      attempts,
      startedAt: Date.now(),
      endedAt: null,
    };
    const known = this.stepRevisions.get(key);
    try {
      this.stepRevisions.set(
        key,
        known === undefined ? await kv.create(key, enc(row)) : await kv.update(key, enc(row), known),
      );
    } catch (err) {
      if (isWrongSequence(err))
        throw new Error(`step ${step} of run ${run} was started by another node`, { cause: err });
      throw err;
    }
  }

  async stepEnded(
    run: string,
    step: string,
    status: Exclude<StepStatus, 'started'>,
    output: unknown,
    error?: string,
  ): Promise<void> {
    if (!this.owned.has(run)) return;
    const kv = await this.kv();
    const key = stepKey(run, step);
    const now = Date.now();
    const row: StepRow = {
      step,
      status,
      output,
      error: error ?? null,
      attempts: 1,
      startedAt: now,
      endedAt: now,
    };
    const known = this.stepRevisions.get(key);
    this.stepRevisions.set(
      key,
      known === undefined ? await kv.create(key, enc(row)) : await kv.update(key, enc(row), known),
    );
  }

  async ended(
    run: string,
    status: Exclude<RunStatus, 'running'>,
    result: unknown,
    error?: string,
  ): Promise<void> {
    // A run another node took over is that node's to end, heard of here or not yet.
    if (!this.owned.delete(run)) return;
    const kv = await this.kv();
    const lease = await kv.get(`l.${run}`);
    if (!this.names(lease)) return this.forgetSteps(run);
    const current = await kv.get(`r.${run}`);
    if (current?.operation === 'PUT') {
      const row = current.json<RunRow>();
      await kv.put(
        `r.${run}`,
        enc({ ...row, status, result, error: error ?? null, endedAt: Date.now() } satisfies RunRow),
      );
    }
    // At the revision read above; a renewal landing after it removes the lease itself (renew).
    await kv.delete(`l.${run}`, { previousSeq: lease.revision }).catch(() => {});
    if (this.cancels.has(run)) await kv.delete(`c.${run}`).catch(() => {});
    this.forgetSteps(run);
  }

  /** Drops what this process kept of a run's step outcomes: it writes that run no more. */
  private forgetSteps(run: string): void {
    for (const k of [...this.stepRevisions.keys()])
      if (k.startsWith(`s.${run}.`)) this.stepRevisions.delete(k);
  }

  /** The run's record and step outcomes as the mesh holds them (`switchboard` on any node). */
  async read(run: string): Promise<{ row: RunRow; steps: StepRow[] } | undefined> {
    const kv = await this.kv();
    const r = await kv.get(`r.${run}`);
    if (r?.operation !== 'PUT') return undefined;
    const steps: StepRow[] = [];
    for await (const key of await kv.keys(`s.${run}.>`)) {
      const s = await kv.get(key);
      if (s?.operation !== 'PUT') continue;
      // Kept only for runs this process writes: a run merely read (shown, or not taken over after
      // all) must leave nothing behind here.
      if (this.owned.has(run)) this.stepRevisions.set(key, s.revision);
      steps.push(s.json<StepRow>());
    }
    return { row: r.json<RunRow>(), steps };
  }

  /** The mesh's runs, newest first (`switchboard workflows runs` on any node): at most `limit`. */
  async list(limit: number, workflow?: string): Promise<RunRow[]> {
    const rows: RunRow[] = [];
    for await (const row of this.records(await this.kv()))
      if (workflow === undefined || row.workflow === workflow) rows.push(row);
    return rows.sort((a, b) => b.startedAt - a.startedAt).slice(0, limit);
  }

  async prune(before: number): Promise<number> {
    const kv = await this.kv();
    let pruned = 0;
    for await (const row of this.records(kv)) {
      if (row.status === 'running' || row.endedAt === null || row.endedAt >= before) continue;
      // Steps first: a record left without steps is a run shown whole or not at all.
      for await (const step of await kv.keys(`s.${row.id}.>`)) await kv.purge(step);
      await kv.purge(`r.${row.id}`);
      pruned++;
    }
    return pruned;
  }

  /** Every run record the bucket holds. */
  private async *records(kv: KV): AsyncGenerator<RunRow> {
    for await (const key of await kv.keys('r.>')) {
      const r = await kv.get(key);
      if (r?.operation === 'PUT') yield r.json<RunRow>();
    }
  }

  async requestCancel(run: string): Promise<boolean> {
    const kv = await this.kv();
    const r = await kv.get(`r.${run}`);
    if (r?.operation !== 'PUT' || r.json<RunRow>().status !== 'running') return false;
    await kv.put(`c.${run}`, this.state.node);
    return true;
  }

  start(
    resume: (row: RunRow, steps: StepRow[]) => void,
    lost: (run: string) => void,
    cancelled?: (run: string) => void,
  ): void {
    this.cancelled = cancelled;
    this.lost = lost;
    void (async () => {
      const kv = await this.kv();
      if (this.closed) return;
      this.followCancels = await followBucket(
        kv,
        'c.>',
        (e) => {
          const run = e.key.slice(2);
          if (e.op !== 'PUT') return void this.cancels.delete(run);
          this.cancels.add(run);
          if (this.owned.has(run)) this.cancelled?.(run);
        },
        this.state.skipped,
      );
      if (this.closed) return this.followCancels.stop();
      this.follow = await followBucket(
        kv,
        'l.>',
        (e) => {
          const run = e.key.slice(2);
          if (e.op !== 'PUT') return void this.leases.delete(run);
          const holder = Buffer.from(e.data).toString('utf8');
          this.leases.set(run, { revision: e.revision, holder, seenAt: Date.now() });
          // Our lease rewritten by another holder: the run is theirs now.
          if (holder !== this.holder) this.release(run);
        },
        this.state.skipped,
      );
      this.timer = setInterval(() => void this.scan(resume), Math.max(50, this.leaseMs / 4));
      this.timer.unref();
      this.renewing();
    })().catch((err: unknown) =>
      this.state.log.warn({ err: (err as Error).message }, 'mesh state: not watching workflow runs'),
    );
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    clearInterval(this.renewal);
    this.follow?.stop();
    this.followCancels?.stop();
  }

  /** Renews this process's leases three times per lease period. */
  private renewing(): void {
    if (this.renewal || this.closed) return;
    this.renewal = setInterval(() => void this.renew(), Math.max(50, this.leaseMs / 3));
    this.renewal.unref();
  }

  private async renew(): Promise<void> {
    // One renewal at a time: a second one, sent at the revision the first is moving on, would fail.
    if (this.owned.size === 0 || this.renewingNow) return;
    this.renewingNow = true;
    try {
      const kv = await this.kv().catch(() => undefined);
      if (kv) for (const [run, revision] of [...this.owned]) await this.renewOne(kv, run, revision);
    } finally {
      this.renewingNow = false;
    }
  }

  private async renewOne(kv: KV, run: string, revision: number): Promise<void> {
    try {
      const next = await kv.update(`l.${run}`, this.holder, revision);
      if (this.owned.has(run)) this.owned.set(run, next);
      // The run ended while this renewal was on its way: its lease goes, at the revision it made.
      else await kv.delete(`l.${run}`, { previousSeq: next }).catch(() => {});
    } catch (err) {
      if (!isWrongSequence(err)) return; // tried again at the next renewal
      // Not the revision this process last heard. Still this process's (an earlier update landed
      // but its answer was lost): go on from the revision it has. Another's, or gone: it is lost.
      const lease = await kv.get(`l.${run}`).catch(() => undefined);
      if (lease === undefined) return; // unread: tried again at the next renewal
      if (this.names(lease)) {
        if (this.owned.has(run)) this.owned.set(run, lease.revision);
      } else this.release(run);
    }
  }

  /** Whether a lease (as read) names this process. */
  private names(lease: KvEntry | null | undefined): lease is KvEntry {
    return lease?.operation === 'PUT' && lease.string() === this.holder;
  }

  /** A run this process held is another's now: it stops here, whichever way that was heard first. */
  private release(run: string): void {
    if (!this.owned.delete(run)) return;
    this.forgetSteps(run);
    this.lost?.(run);
  }

  /** Takes over the runs whose lease nobody renewed for leaseMs. */
  private async scan(resume: (row: RunRow, steps: StepRow[]) => void): Promise<void> {
    if (this.scanning || this.closed) return;
    this.scanning = true;
    try {
      const kv = await this.kv();
      const now = Date.now();
      for (const [run, seen] of [...this.leases]) {
        if (seen.holder === this.holder || this.owned.has(run) || now - seen.seenAt <= this.leaseMs) continue;
        let revision: number;
        try {
          revision = await kv.update(`l.${run}`, this.holder, seen.revision);
        } catch (err) {
          if (!isWrongSequence(err)) throw err;
          continue; // renewed, or another node took it first
        }
        this.owned.set(run, revision);
        const held = await this.read(run);
        if (!held || held.row.status !== 'running') {
          this.owned.delete(run);
          this.forgetSteps(run);
          await kv.delete(`l.${run}`, { previousSeq: revision }).catch(() => {});
          continue;
        }
        this.state.log.info({ run, from: seen.holder.split('/')[0] }, 'took over a workflow run');
        resume(held.row, held.steps);
        // Asked to cancel while nobody held it (or before its node was lost): it stops here.
        if (this.cancels.has(run)) this.cancelled?.(run);
      }
    } catch (err) {
      this.state.log.warn(
        { err: (err as Error).message },
        'mesh state: looking for runs to take over failed',
      );
    } finally {
      this.scanning = false;
    }
  }
}
