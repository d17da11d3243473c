// Durable workflow runs: each run and each step's outcome in the state database, written as they
// happen, so a run interrupted by a crash resumes from its last finished step after a restart.
import { randomUUID } from 'node:crypto';
import { migrate, type StateDb } from '../state/state-db.js';

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'cancelled';
/** `cancelled`: cut short because its run was cancelled or another step of it failed. */
export type StepStatus = 'started' | 'done' | 'skipped' | 'failed' | 'cancelled';

export interface RunRow {
  id: string;
  workflow: string;
  caller: string;
  parentRun: string | null;
  status: RunStatus;
  input: unknown;
  result: unknown;
  error: string | null;
  ownerPid: number | null;
  cancelRequested: boolean;
  startedAt: number;
  endedAt: number | null;
  /** Run as a task: how long the task is kept, as its caller asked (absent in rows of older nodes). */
  taskTtlMs?: number | undefined;
}

export interface StepRow {
  step: string;
  status: StepStatus;
  output: unknown;
  error: string | null;
  attempts: number;
  startedAt: number | null;
  endedAt: number | null;
}

const MIGRATIONS = [
  `CREATE TABLE workflow_runs (
     id TEXT PRIMARY KEY,
     workflow TEXT NOT NULL,
     caller TEXT NOT NULL,
     parent_run TEXT,
     status TEXT NOT NULL,
     input TEXT NOT NULL,
     result TEXT,
     error TEXT,
     owner_pid INTEGER,
     cancel_requested INTEGER NOT NULL DEFAULT 0,
     started_at INTEGER NOT NULL,
     ended_at INTEGER
   );
   CREATE INDEX workflow_runs_status ON workflow_runs (status);
   CREATE TABLE workflow_steps (
     run_id TEXT NOT NULL,
     step TEXT NOT NULL,
     status TEXT NOT NULL,
     output TEXT,
     error TEXT,
     attempts INTEGER NOT NULL DEFAULT 0,
     started_at INTEGER,
     ended_at INTEGER,
     PRIMARY KEY (run_id, step)
   );`,
  // A task's ttl is said in every tasks/get, after a restart as before it.
  `ALTER TABLE workflow_runs ADD COLUMN task_ttl_ms INTEGER;`,
];

const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
const parsed = (s: string | null): unknown => (s === null ? undefined : JSON.parse(s));

interface RawRun {
  id: string;
  workflow: string;
  caller: string;
  parent_run: string | null;
  status: RunStatus;
  input: string;
  result: string | null;
  error: string | null;
  owner_pid: number | null;
  cancel_requested: number;
  started_at: number;
  ended_at: number | null;
  task_ttl_ms: number | null;
}

function runOf(r: RawRun): RunRow {
  return {
    id: r.id,
    workflow: r.workflow,
    caller: r.caller,
    parentRun: r.parent_run,
    status: r.status,
    input: parsed(r.input),
    result: parsed(r.result),
    error: r.error,
    ownerPid: r.owner_pid,
    cancelRequested: r.cancel_requested === 1,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    ...(r.task_ttl_ms !== null && { taskTtlMs: r.task_ttl_ms }),
  };
}

export class RunStore {
  constructor(private readonly db: StateDb) {
    migrate(db, 'workflows', MIGRATIONS);
  }

  create(workflow: string, caller: string, input: unknown, parentRun?: string): string {
    const id = `run-${randomUUID()}`;
    this.db
      .prepare(
        `INSERT INTO workflow_runs (id, workflow, caller, parent_run, status, input, owner_pid, started_at)
         VALUES (?, ?, ?, ?, 'running', ?, ?, ?)`,
      )
      .run(id, workflow, caller, parentRun ?? null, JSON.stringify(input ?? {}), process.pid, Date.now());
    return id;
  }

  /** The run became a task kept for `ttlMs`. */
  taskKept(id: string, ttlMs: number): void {
    this.db.prepare('UPDATE workflow_runs SET task_ttl_ms = ? WHERE id = ?').run(ttlMs, id);
  }

  /** Takes over a run after a restart: this process owns it now. */
  adopt(id: string): void {
    this.db.prepare('UPDATE workflow_runs SET owner_pid = ? WHERE id = ?').run(process.pid, id);
  }

  /** A run taken over from another node: its record and step outcomes as the mesh holds them. */
  imported(row: RunRow, steps: readonly StepRow[]): void {
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT OR REPLACE INTO workflow_runs (id, workflow, caller, parent_run, status, input, owner_pid, started_at, task_ttl_ms)
           VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?)`,
        )
        .run(
          row.id,
          row.workflow,
          row.caller,
          row.parentRun,
          JSON.stringify(row.input ?? {}),
          process.pid,
          row.startedAt,
          row.taskTtlMs ?? null,
        );
      this.db.prepare('DELETE FROM workflow_steps WHERE run_id = ?').run(row.id);
      const put = this.db.prepare(
        `INSERT INTO workflow_steps (run_id, step, status, output, error, attempts, started_at, ended_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const s of steps)
        put.run(row.id, s.step, s.status, json(s.output), s.error, s.attempts, s.startedAt, s.endedAt);
    })();
  }

  end(id: string, status: Exclude<RunStatus, 'running'>, result: unknown, error?: string): void {
    this.db
      .prepare('UPDATE workflow_runs SET status = ?, result = ?, error = ?, ended_at = ? WHERE id = ?')
      .run(status, json(result), error ?? null, Date.now(), id);
  }

  stepStarted(run: string, step: string, attempts: number): void {
    this.db
      .prepare(
        `INSERT INTO workflow_steps (run_id, step, status, attempts, started_at) VALUES (?, ?, 'started', ?, ?)
         ON CONFLICT (run_id, step) DO UPDATE SET status = 'started', attempts = excluded.attempts,
           started_at = excluded.started_at, output = NULL, error = NULL, ended_at = NULL`,
      )
      .run(run, step, attempts, Date.now());
  }

  stepEnded(
    run: string,
    step: string,
    status: Exclude<StepStatus, 'started'>,
    output: unknown,
    error?: string,
  ): void {
    this.db
      .prepare(
        `INSERT INTO workflow_steps (run_id, step, status, output, error, started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (run_id, step) DO UPDATE SET status = excluded.status, output = excluded.output,
           error = excluded.error, ended_at = excluded.ended_at`,
      )
      .run(run, step, status, json(output), error ?? null, Date.now(), Date.now());
  }

  get(id: string): RunRow | undefined {
    const r = this.db.prepare('SELECT * FROM workflow_runs WHERE id = ?').get(id) as RawRun | undefined;
    return r && runOf(r);
  }

  steps(id: string): StepRow[] {
    const rows = this.db
      .prepare('SELECT * FROM workflow_steps WHERE run_id = ? ORDER BY started_at, step')
      .all(id) as {
      step: string;
      status: StepStatus;
      output: string | null;
      error: string | null;
      attempts: number;
      started_at: number | null;
      ended_at: number | null;
    }[];
    return rows.map((r) => ({
      step: r.step,
      status: r.status,
      output: parsed(r.output),
      error: r.error,
      attempts: r.attempts,
      startedAt: r.started_at,
      endedAt: r.ended_at,
    }));
  }

  /** Deletes the runs (and their steps) that ended before `before`; returns how many. */
  prune(before: number): number {
    return this.db
      .transaction(() => {
        const ended = "status != 'running' AND ended_at IS NOT NULL AND ended_at < ?";
        this.db
          .prepare(`DELETE FROM workflow_steps WHERE run_id IN (SELECT id FROM workflow_runs WHERE ${ended})`)
          .run(before);
        return this.db.prepare(`DELETE FROM workflow_runs WHERE ${ended}`).run(before).changes;
      })
      .immediate();
  }

  /** Newest first. */
  list(limit = 50, workflow?: string): RunRow[] {
    const rows = workflow
      ? this.db
          .prepare('SELECT * FROM workflow_runs WHERE workflow = ? ORDER BY started_at DESC LIMIT ?')
          .all(workflow, limit)
      : this.db.prepare('SELECT * FROM workflow_runs ORDER BY started_at DESC LIMIT ?').all(limit);
    return (rows as RawRun[]).map(runOf);
  }

  /** Runs still marked running: those of a process that ended are interrupted. */
  running(): RunRow[] {
    return (this.db.prepare("SELECT * FROM workflow_runs WHERE status = 'running'").all() as RawRun[]).map(
      runOf,
    );
  }

  /** Asks the process running `id` to cancel it (`switchboard workflows cancel`); false if not running. */
  requestCancel(id: string): boolean {
    return (
      this.db
        .prepare("UPDATE workflow_runs SET cancel_requested = 1 WHERE id = ? AND status = 'running'")
        .run(id).changes === 1
    );
  }

  /**
   * Ends a run that no process runs (its owner is gone) as cancelled, its steps under way too:
   * the cancel a switchboard running it would have made.
   */
  cancelStranded(id: string, why: string): void {
    this.db.transaction(() => {
      this.end(id, 'cancelled', undefined, 'cancelled');
      this.db
        .prepare(
          "UPDATE workflow_steps SET status = 'cancelled', error = ?, ended_at = ? WHERE run_id = ? AND status = 'started'",
        )
        .run(why, Date.now(), id);
    })();
  }

  /** Of these runs, the ones someone asked to cancel. */
  cancelRequested(ids: readonly string[]): string[] {
    if (ids.length === 0) return [];
    const rows = this.db
      .prepare(
        `SELECT id FROM workflow_runs WHERE cancel_requested = 1 AND id IN (${ids.map(() => '?').join(',')})`,
      )
      .all(...ids) as { id: string }[];
    return rows.map((r) => r.id);
  }
}
