// Fault-test helpers: the faulty backend's config entry, a host for it, and the process table.
import type { Client } from '@modelcontextprotocol/client';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Switchboard } from '../../src/switchboard.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';

export const FAULTY = fileURLToPath(new URL('../fixtures/faulty-server.js', import.meta.url));

/** A backend entry running the faulty server with these flags. */
export function faulty(args: string[] = [], extra: object = {}) {
  return { command: process.execPath, args: [FAULTY, ...args], ...extra };
}

/** A host over HTTP; `onListChanged` hears of tool-list changes. Closed when the test ends. */
export async function connect(t: TestContext, sb: Switchboard, onListChanged?: () => void): Promise<Client> {
  const setup = (client: Client) => {
    if (onListChanged) client.setNotificationHandler('notifications/tools/list_changed', onListChanged);
  };
  return (await connectHttp(t, httpUrl(sb), { name: 'fault-host', setup })).client;
}

/** The JSON a faulty tool answered with, its pids (`pid`, `leaked`) as this process sees them. */
export function json(result: unknown): Record<string, unknown> {
  const first = (result as { content: { text: string }[] }).content[0]!;
  return withHostPids(JSON.parse(first.text) as Record<string, unknown>);
}

/** A faulty server's report with the pids it gave from inside its sandbox turned into ours. */
export function withHostPids(report: Record<string, unknown>): Record<string, unknown> {
  const instance = report['instance'];
  if (typeof instance !== 'string') return report;
  const out = { ...report };
  for (const key of ['pid', 'leaked'])
    if (typeof out[key] === 'number') out[key] = hostPid(out[key] as number, instance);
  return out;
}

/**
 * The pid this process sees for one a sandboxed faulty server (or its child) reported from inside
 * its own PID namespace: the process whose innermost pid is `pid` and whose bridge token digests to
 * `instance` (no instance: the pid as it is). NaN once no such process exists (so it is neither running nor killable).
 */
export function hostPid(pid: number, instance: string | undefined): number {
  if (instance === undefined) return pid; // not spawned by switchboard, so not sandboxed
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const nspid = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1]?.split(/\s+/);
      if (Number(nspid?.at(-1)) !== pid) continue;
      const token = /(?:^|\0)SWITCHBOARD_BRIDGE_TOKEN=([^\0]*)/.exec(
        readFileSync(`/proc/${entry}/environ`, 'utf8'),
      )?.[1];
      if (token && createHash('sha256').update(token).digest('hex').slice(0, 16) === instance)
        return Number(entry);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return Number.NaN;
}

export async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((x) => x.name);
}

/** /proc/<pid>/stat fields after the command: state, ppid, pgid. Undefined once the pid is gone. */
function stat(pid: number): { state: string; ppid: number; pgid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid, pgid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: state!, ppid: Number(ppid), pgid: Number(pgid) };
  } catch {
    return undefined;
  }
}

/** Whether a process is running (a zombie is not: it is dead, only not yet reaped). */
export function running(pid: number): boolean {
  const s = stat(pid);
  return s !== undefined && s.state !== 'Z' && s.state !== 'X';
}

export function pgidOf(pid: number): number | undefined {
  return stat(pid)?.pgid;
}

export function ppidOf(pid: number): number | undefined {
  return stat(pid)?.ppid;
}
