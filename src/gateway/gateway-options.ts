// What a gateway is made with: the configuration and log, and the pieces its owner opens
// (audit, redaction, approvals, the sandbox, the state database) that it calls into.
import type { CatalogOptions } from '../catalog/catalog.js';
import type { Config } from '../config/schema.js';
import type { Channel } from '../jsonrpc/channel.js';
import type { Logger } from '../log.js';
import type { NeedsApproval } from '../pipeline/stages/policy.js';
import type { StateDb } from '../state/state-db.js';
import type { SharedTaskOwners } from '../tasks/shared-task-owners.js';
import type { ApprovalStore } from '../trust/approval-store.js';
import type { AuditWriter } from '../trust/audit-writer.js';
import type { Redactor } from '../vault/redactor.js';
import type { BackendLifecycleDeps } from './backend-lifecycle.js';

export interface GatewayOptions {
  config: Config;
  log: Logger;
  /** Replaces the channel made from a backend's config (tests). */
  channel?: (name: string) => Channel | undefined;
  /** Where call records go (audit); none: calls are not audited. */
  audit?: AuditWriter | undefined;
  /** Which listed items enter the catalog (tool pinning). */
  admit?: CatalogOptions['admit'];
  /** Hides vault secrets and configured patterns from everything sent to callers. */
  redactor?: Redactor | undefined;
  /** Where approvals an operator gives are kept; without it only hosts can approve calls. */
  approvals?: ApprovalStore | undefined;
  /** Definitions held by pinning that stay usable with approval (pinning). */
  needsApproval?: NeedsApproval | undefined;
  /** How each spawned backend's command is wrapped (the sandbox); none: run as configured. */
  launcher?: BackendLifecycleDeps['launcher'];
  /** The state database: who owns which task outlives a restart; none: kept in memory only. */
  state?: StateDb | undefined;
  /** In-process sources that will own tasks (workflows): their tasks outlive a restart too. */
  taskSources?: readonly string[] | undefined;
  /** Task ownership the mesh's nodes share (mesh.state jetstream): other nodes' tasks answered here. */
  sharedTasks?: SharedTaskOwners | undefined;
}
