// What the admin API answers for status and tools, built from what the gateway, the pins and the
// approval store already keep: plain JSON a CLI table and a dashboard both render.
import type { Gateway } from '../gateway/gateway.js';
import type { RemoteNode, ReplicaView } from '../gateway/remote-backends.js';
import type { ApprovalStore } from '../trust/approval-store.js';
import type { PinStore, PinRow } from '../trust/pins-store.js';
import type { RecentCalls } from '../observe/recent-calls.js';
import type { AuditWriter } from '../trust/audit-writer.js';
import type { ReloadState } from '../gateway/reload-plan.js';
import { SERVER_INFO } from '../protocol/versions.js';

export interface ViewSources {
  gateway: Gateway;
  recent: RecentCalls;
  approvals?: ApprovalStore | undefined;
  pins?: PinStore | undefined;
  bridgeConnections: () => number;
  startedAt: number;
  /** The audit trail's writer (undefined with audit off). */
  audit?: Pick<AuditWriter, 'recordsWritten' | 'lost' | 'failing' | 'failsClosed'> | undefined;
  /** How reloads went. */
  reloads?: (() => ReloadState) | undefined;
}

export interface BackendStatus {
  name: string;
  state: string;
  /** closed: ready; half-open: starting (a restart probes it); open: failed or stopped. */
  breaker: 'closed' | 'half-open' | 'open';
  era?: string | undefined;
  replicas: ReplicaView[];
  replicasUp: number;
  /** A server of other nodes of the mesh: the nodes serving it (its replicas above are these). */
  nodes?: RemoteNode[] | undefined;
  restarts: number;
  lastError?: string | undefined;
  /** A backend that is not ready: the last lines it wrote on stderr (redacted), its why. */
  stderr?: readonly string[] | undefined;
  callsLastMinute: number;
  tools: number;
}

export function statusView(s: ViewSources) {
  const { gateway } = s;
  const rates = s.recent.lastMinute();
  const tools = gateway.catalog.list('tools').tools as { name: string }[];
  const toolsOf = new Map<string, number>();
  for (const t of tools) {
    const owner = gateway.catalog.ownerOf(t)?.backend;
    if (owner) toolsOf.set(owner, (toolsOf.get(owner) ?? 0) + 1);
  }
  const backends: BackendStatus[] = [...gateway.backends.values()].map((b) => {
    const nodes = gateway.remotes.nodesOf(b.name);
    const replicas = gateway.remotes.replicasOf(b);
    return {
      name: b.name,
      state: b.state,
      breaker: b.state === 'ready' ? 'closed' : b.state === 'starting' ? 'half-open' : 'open',
      era: b.server?.era,
      replicas,
      replicasUp: replicas.filter((r) => r.state === 'ready').length,
      ...(nodes && { nodes }),
      restarts: b.status().reduce((n, r) => n + r.restarts, 0),
      lastError: b.lastError,
      ...(b.state !== 'ready' && b.lastStderr.length > 0 && { stderr: b.lastStderr }),
      callsLastMinute: rates[b.name] ?? 0,
      tools: toolsOf.get(b.name) ?? 0,
    };
  });
  const legacy = [...gateway.sessions.values()].filter((x) => x.caller.kind === 'host').length;
  const load = gateway.admissionLoad();
  return {
    version: SERVER_INFO.version,
    pid: process.pid,
    uptimeSeconds: Math.round((Date.now() - s.startedAt) / 1000),
    backends,
    sessions: { legacy, bridge: s.bridgeConnections() },
    calls: { lastMinute: rates, admitted: load.admitted, queued: load.queued },
    approvalsPending: pendingApprovals(s.approvals),
    tools: tools.length,
    audit: auditHealth(s.audit),
    reloads: s.reloads?.(),
  };
}

/**
 * The audit trail's writes: records written and lost since start, and why its writes fail now
 * (then, failing closed, every call is refused until one succeeds: `refusing`).
 */
export function auditHealth(audit: ViewSources['audit']) {
  if (!audit) return undefined;
  const failing = audit.failing;
  return {
    written: audit.recordsWritten,
    lost: audit.lost,
    ...(failing !== undefined && { failing, refusing: audit.failsClosed }),
  };
}

export function pendingApprovals(store: ApprovalStore | undefined): number {
  return store ? store.pending().length : 0;
}

/**
 * The catalog's tools with their owner, what the trust layer knows of each, and what the policy
 * says of the operator asking (`call`): a tool it refuses them is answered as unknown to their call.
 */
export function toolsView(s: ViewSources, operator: string) {
  const { gateway } = s;
  const policy = gateway.rules;
  const caller = { kind: 'admin', id: operator } as const;
  const pins = new Map<string, PinRow>();
  for (const row of s.pins?.list() ?? [])
    if (row.kind === 'tool') pins.set(`${row.backend}\0${row.name}`, row);
  const tools = gateway.catalog.list('tools').tools as Record<string, unknown>[];
  const listed = tools.map((t) => {
    const owner = gateway.catalog.ownerOf(t);
    const pin = owner ? pins.get(`${owner.backend}\0${owner.name}`) : undefined;
    const exposed = t.name as string;
    // Judged as the pipeline judges a listed tool; `call` (a rule with conditions) waits for arguments.
    const verdict = policy.decideListing(caller, {
      kind: 'tool',
      backend: owner?.backend,
      name: owner?.name ?? exposed,
      exposed,
      method: 'tools/call',
    });
    return {
      name: exposed,
      backend: owner?.backend,
      backendName: owner?.name,
      title: (t.title as string | undefined) ?? (t.annotations as { title?: string } | undefined)?.title,
      description: typeof t.description === 'string' ? t.description : undefined,
      annotations: t.annotations,
      pin: pinState(pin, s.pins !== undefined),
      flags: [...(pin?.flags ?? []), ...(pin?.changed?.flags ?? [])],
      call: verdict.effect === 'call' ? 'by-arguments' : verdict.effect,
    };
  });
  // Held definitions are not in the catalog (or are served as pinned): list them so an operator sees them.
  const held = [...pins.values()]
    .filter((p) => p.changed)
    .map((p) => ({ backend: p.backend, name: p.name, reason: p.changed!.reason, flags: p.changed!.flags }));
  return { caller: `admin:${operator}`, tools: listed, held, pinning: s.pins !== undefined };
}

function pinState(pin: PinRow | undefined, pinning: boolean): string {
  if (!pinning) return 'off';
  if (!pin) return 'unpinned';
  if (pin.changed) return `held:${pin.changed.reason}`;
  return pin.sha256 ? 'pinned' : 'awaiting-first-approval';
}
