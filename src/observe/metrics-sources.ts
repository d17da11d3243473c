// What the metrics read at scrape time (prom-client collect()): the state the gateway, the bridge,
// the audit writer and the approval store already keep, so nothing is counted twice.
export interface BackendView {
  readonly name: string;
  readonly state: string;
  /** Its own replicas (their restarts). */
  status(): readonly { state: string; restarts: number }[];
  /** The replicas it is served by: for another node's server, the nodes serving it. */
  replicas(): readonly { state: string }[];
}

export interface MetricsSources {
  backends(): Iterable<BackendView>;
  /** Host sessions opened by initialize (legacy era). */
  legacySessions(): number;
  /** Calls waiting in an admission queue. */
  admissionQueued(): number;
  /** Bridge connections open now (0 without a bridge). */
  bridgeConnections(): number;
  /** Calls waiting for an operator's approval (0 without an approval store). */
  approvalsPending(): number;
  /** The audit writer's counts, when audit is on. */
  audit(): { written: number; lost: number; lag: number; failing: boolean } | undefined;
  /** Whether a method is served by a handler (its name may then be a label). */
  isHandler(method: string): boolean;
}
