// What the dashboard's topology, quarantine diff and workflow views read, built from the stores
// the rest of switchboard keeps (the gateway's backends and sessions, the call edges fed by the
// pipeline's events, the pins, the workflow runs in the state database): no second bookkeeping.
import type { CallEdges } from '../observe/call-edges.js';
import { pinDiff } from '../trust/pin-diff.js';
import type { PinKind } from '../trust/pins-definition.js';
import type { PinStore } from '../trust/pins-store.js';
import type { RunStore } from '../workflows/run-store.js';
import { statusView, type ViewSources } from './admin-views.js';

/** How many stderr lines of a backend the topology shows. */
const STDERR_LINES = 20;

/** The last stderr lines of a backend (redacted as they were kept), for the dashboard's card. */
export function backendStderrTail(
  backend: { lastStderr: readonly string[] } | undefined,
): string[] | undefined {
  return backend?.lastStderr.length ? backend.lastStderr.slice(-STDERR_LINES) : undefined;
}

export function topologyView(s: ViewSources, edges: CallEdges) {
  const status = statusView(s);
  const live = edges.list();
  // Hosts: every legacy session (by caller), and every caller that made a call this minute.
  const hosts = new Map<
    string,
    {
      caller: string;
      kind: string;
      era: string;
      sessions: number;
      clients: string[];
      callsLastMinute: number;
    }
  >();
  const hostOf = (caller: string, kind: string, era: string) => {
    const key = `${caller}\0${era}`;
    let h = hosts.get(key);
    if (!h) hosts.set(key, (h = { caller, kind, era, sessions: 0, clients: [], callsLastMinute: 0 }));
    return h;
  };
  for (const session of s.gateway.sessions.values()) {
    if (session.caller.kind !== 'host') continue;
    const h = hostOf(`host:${session.caller.id}`, 'host', 'legacy');
    h.sessions++;
    const name = session.clientInfo?.name;
    if (typeof name === 'string' && !h.clients.includes(name)) h.clients.push(name);
  }
  for (const e of live)
    if (e.callerKind !== 'backend')
      hostOf(e.caller, e.callerKind, e.era).callsLastMinute += e.callsLastMinute;
  const backends = status.backends.map((b) => ({
    ...b,
    stderr: backendStderrTail(s.gateway.backends.get(b.name)),
  }));
  return {
    hosts: [...hosts.values()],
    backends,
    // Every caller → server pair of the last minute; those from a backend are the bridge's.
    edges: live.map((e) => ({
      from: e.caller,
      fromKind: e.callerKind,
      era: e.era,
      to: e.server,
      bridge: e.callerKind === 'backend',
      callsLastMinute: e.callsLastMinute,
      lastCall: new Date(e.lastCall).toISOString(),
    })),
    sessions: status.sessions,
  };
}

/** The pinned definition against the one served instead, line by line (as `switchboard pins diff`). */
export function pinDiffView(pins: PinStore, backend: string, name: string, kind: PinKind) {
  const pin = pins.get(backend, name, kind);
  if (!pin) return undefined;
  const changed = pin.changed;
  if (!changed) return { backend, name, kind, quarantined: false, flags: pin.flags, lines: [] as string[] };
  const { pinned, lines } = pinDiff(pins, pin, changed);
  return {
    backend,
    name,
    kind,
    quarantined: true,
    reason: changed.reason,
    renamedFrom: changed.renamedFrom,
    pinned: pinned && {
      sha256: pinned.sha256,
      at: new Date(pinned.pinnedAt).toISOString(),
      name: pinned.name,
    },
    served: { sha256: changed.sha256, at: new Date(changed.seenAt).toISOString() },
    flags: changed.flags,
    lines,
  };
}

export function runsView(runs: RunStore, limit: number, workflow?: string) {
  return runs.list(limit, workflow).map((r) => ({
    id: r.id,
    workflow: r.workflow,
    caller: r.caller,
    parentRun: r.parentRun,
    status: r.status,
    error: r.error,
    startedAt: new Date(r.startedAt).toISOString(),
    endedAt: r.endedAt === null ? null : new Date(r.endedAt).toISOString(),
  }));
}

export function runView(runs: RunStore, id: string) {
  const run = runs.get(id);
  if (!run) return undefined;
  return {
    ...run,
    startedAt: new Date(run.startedAt).toISOString(),
    endedAt: run.endedAt === null ? null : new Date(run.endedAt).toISOString(),
    steps: runs.steps(id).map((st) => ({
      ...st,
      startedAt: st.startedAt === null ? null : new Date(st.startedAt).toISOString(),
      endedAt: st.endedAt === null ? null : new Date(st.endedAt).toISOString(),
    })),
  };
}
