// What the workflow engine asks of a run store several nodes share (the mesh's JetStream state):
// each run's record and step outcomes written where every node can read them, before the step they
// concern goes on, and a lease per run, renewed by the node running it, so that when that node is
// lost exactly one other node takes the run over and resumes it from its last finished step.
import type { RunRow, RunStatus, StepRow, StepStatus } from './run-store.js';

export interface SharedRuns {
  /** Records a new run as this node's (its lease taken); before its first step runs. */
  created(row: RunRow): Promise<void>;
  /**
   * Claims a step before its call is made: refused (throws) when another node has started it or
   * has taken the run over, so no step runs on two nodes.
   */
  stepStarted(run: string, step: string, attempts: number): Promise<void>;
  stepEnded(
    run: string,
    step: string,
    status: Exclude<StepStatus, 'started'>,
    output: unknown,
    error?: string,
  ): Promise<void>;
  /** The run's end; its lease is let go. */
  ended(run: string, status: Exclude<RunStatus, 'running'>, result: unknown, error?: string): Promise<void>;
  /**
   * Starts watching other nodes' leases: a run whose lease is not renewed in time is taken over
   * (by one node) and handed to `resume` with its record and step outcomes; `lost` is told of a run
   * of this node's another node took (this node was thought gone): it must stop running it.
   */
  start(
    resume: (row: RunRow, steps: StepRow[]) => void,
    lost: (run: string) => void,
    cancelled?: (run: string) => void,
  ): void;
  /** The run's record and step outcomes as the mesh holds them; undefined for a run it does not know. */
  read(run: string): Promise<{ row: RunRow; steps: StepRow[] } | undefined>;
  /**
   * Asks whichever node runs `run` to cancel it (written where every node sees it: the node holding
   * the run hears it through `start`'s `cancelled`, now or when it takes the run over); false if the
   * mesh knows no such run under way.
   */
  requestCancel(run: string): Promise<boolean>;
  /** Deletes the runs that ended before `before` (record and step outcomes); returns how many. */
  prune(before: number): Promise<number>;
  close(): void;
}

/** A run started as an MCP task, as every node of the mesh knows it: who owns it, and for how long. */
export interface RunTask {
  run: string;
  workflow: string;
  /** The caller whose call started it (`<kind>:<id>`): the only one that may reach it. */
  owner: string;
  /** The request it stands for (tools/call) and the name it was made to (what grants judge). */
  method: string;
  subject: string;
  ttlMs: number;
  createdAt: number;
}

/** Run tasks the mesh's nodes share: written before the task is answered, read on any node. */
export interface SharedRunTasks {
  created(task: RunTask): Promise<void>;
  /** A run task this node has seen (every node follows them all), undefined if none or expired. */
  task(run: string): RunTask | undefined;
  /** The owner's run tasks, current ones only. */
  of(owner: string): RunTask[];
}
