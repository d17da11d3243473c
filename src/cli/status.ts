// `switchboard status`: backends (state, replicas, restarts, breaker, last error), sessions, calls
// in the last minute and pending approvals of a running switchboard, from its admin API.
import { ADMIN_OPTIONS_USAGE } from './admin-client.js';
import { runAdminView, table } from './admin-view-command.js';
import type { BackendStatus, statusView } from '../admin/admin-views.js';
import { processIo, type CommandIo } from './io.js';

export const STATUS_USAGE = `Usage: switchboard status [--json] [options]

Shows the running switchboard: each server's state, replicas up, restarts, circuit breaker and
last error, calls in the last minute, host sessions, bridge connections and pending approvals;
and, when there is one, an audit trail that cannot be written, a refused reload, and settings
that wait for a restart.

  --json    the admin API's answer as it is (GET /api/v1/status)

${ADMIN_OPTIONS_USAGE}`;

type Status = ReturnType<typeof statusView>;

export async function runStatus(argv: string[], io: CommandIo = processIo): Promise<number> {
  return runAdminView<Status>('status', STATUS_USAGE, '/api/v1/status', argv, io, (status) => {
    const up = status.backends.filter((b) => b.state === 'ready').length;
    io.out(
      `switchboard ${status.version} (pid ${status.pid}), up ${duration(status.uptimeSeconds)}: ` +
        `${up} of ${status.backends.length} servers ready, ${status.tools} tools`,
    );
    io.out(
      table(
        ['SERVER', 'STATE', 'REPLICAS', 'RESTARTS', 'BREAKER', 'CALLS/MIN', 'TOOLS', 'LAST ERROR'],
        status.backends.map((b) => [
          b.name,
          b.state,
          replicasCell(b),
          String(b.restarts),
          b.breaker,
          String(b.callsLastMinute),
          String(b.tools),
          b.lastError ? b.lastError.split('\n')[0]!.slice(0, 60) : '',
        ]),
      ),
    );
    // Why a server is down, in its own words (its last stderr line).
    for (const b of status.backends)
      if (b.stderr?.length)
        io.out(`${b.name} wrote on stderr: ${b.stderr[b.stderr.length - 1]!.slice(0, 200)}`);
    const inside = status.calls.lastMinute['(switchboard)'] ?? 0;
    io.out(
      `sessions: ${status.sessions.legacy} legacy host sessions, ${status.sessions.bridge} bridge connections; ` +
        `calls: ${status.calls.admitted} under way, ${status.calls.queued} queued, ${inside} answered by switchboard in the last minute; ` +
        `approvals pending: ${status.approvalsPending}`,
    );
    const audit = status.audit;
    if (audit?.failing !== undefined)
      io.out(
        `audit: writes fail (${audit.failing}); ${audit.lost} records lost since start` +
          (audit.refusing ? '; every call is refused until one is written' : ''),
      );
    else if (audit && audit.lost > 0) io.out(`audit: ${audit.lost} records lost since start (see the log)`);
    const reloads = status.reloads;
    if (reloads?.lastError !== undefined)
      io.out(`reload refused, the running configuration stays: ${reloads.lastError}`);
    if (reloads?.needRestart.length)
      io.out(`changed in the file, waiting for a restart: ${reloads.needRestart.join(', ')}`);
    for (const f of reloads?.failed ?? [])
      io.out(`reloaded, but ${f.name} did not start (it keeps running as it was, or is retried): ${f.error}`);
  });
}

/** Replicas up of all; for another node's server, the nodes serving it (those refusing this one named). */
export function replicasCell(b: BackendStatus): string {
  const count = `${b.replicasUp}/${b.replicas.length}`;
  if (!b.nodes) return count;
  const nodes = b.nodes.map((n) => (n.state === 'refusing' ? `${n.node} (refusing)` : n.node));
  return `${count} on ${nodes.join(', ')}`;
}

function duration(seconds: number): string {
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  return `${Math.round(seconds / 3600)}h`;
}
