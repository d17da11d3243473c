// Fault-test helpers: the faulty backend's config entry, a switchboard in-process, and the process table.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { readFileSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Config, type ConfigInput } from '../../src/config/schema.js';
import { startSwitchboard, type Switchboard } from '../../src/switchboard.js';

export const FAULTY = fileURLToPath(new URL('../fixtures/faulty-server.js', import.meta.url));

/** A backend entry running the faulty server with these flags. */
export function faulty(args: string[] = [], extra: object = {}) {
  return { command: process.execPath, args: [FAULTY, ...args], ...extra };
}

/** Starts switchboard on a free port; `stop` is idempotent and also runs when the test ends. */
export async function start(t: TestContext, input: ConfigInput): Promise<Switchboard> {
  const sb = await startSwitchboard({
    config: Config.parse({ ...input, http: { port: 0 }, log: { level: 'silent' } }),
    http: true,
  });
  let stopped: Promise<{ cut: string[] }> | undefined;
  const stop = () => (stopped ??= sb.stop());
  t.after(stop);
  return { ...sb, stop };
}

export async function connect(t: TestContext, sb: Switchboard, onListChanged?: () => void): Promise<Client> {
  const client = new Client({ name: 'fault-host', version: '1.0.0' }, { capabilities: {} });
  if (onListChanged) client.setNotificationHandler('notifications/tools/list_changed', onListChanged);
  await client.connect(new StreamableHTTPClientTransport(new URL(sb.http!.url)));
  t.after(() => client.close());
  return client;
}

/** The JSON a faulty tool answered with. */
export function json(result: unknown): Record<string, unknown> {
  const first = (result as { content: { text: string }[] }).content[0]!;
  return JSON.parse(first.text) as Record<string, unknown>;
}

export async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((x) => x.name);
}

/** Waits, up to `ms`, for `check` to hold; a bounded wait for an event, not a timing assertion. */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms = 15_000,
): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
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
