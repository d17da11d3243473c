// What a benchmark talks to: an SDK Client connected over stdio or Streamable HTTP, with the process it is charged to.
import { setMaxListeners } from 'node:events';
import type { Readable } from 'node:stream';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { ROOT } from './paths.js';
import { adopt, endTree, noteDescendants, spawnChild, tailOf, type Child } from './processes.js';

/** `C` is what the benchmark talks through: an SDK Client unless a scenario says otherwise. */
export interface Endpoint<C = Client> {
  readonly client: C;
  /** The server (or gateway) process this endpoint's CPU and memory are read from. */
  readonly pid: number;
  stderrTail(): string;
  /** Records what the process has started by now (a gateway's backends), so none outlives the run. */
  noteChildren(): void;
  close(): Promise<void>;
}

const CLIENT_INFO = { name: 'switchboard-bench', version: '0.1.0' };

/** The era a benchmark host speaks: a legacy (2025-11-25) session, or modern (2026-07-28) requests. */
export type Era = 'legacy' | 'modern';

function newClient(era: Era): Client {
  return era === 'modern'
    ? new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
    : new Client(CLIENT_INFO);
}

/** Spawns `command` through the SDK's stdio transport and connects a Client of the given era. */
export async function openStdio(
  label: string,
  command: string,
  args: string[],
  connectTimeoutMs: number,
  era: Era = 'legacy',
): Promise<Endpoint> {
  const transport = new StdioClientTransport({ command, args, cwd: ROOT, stderr: 'pipe' });
  const stderrTail = tailOf(transport.stderr as Readable);
  // Adopt the child the moment the transport spawns it (spawn happens synchronously inside
  // start()), so Ctrl-C during a slow connect still finds it.
  const start = transport.start.bind(transport);
  transport.start = () => {
    const started = start();
    if (transport.pid !== null) adopt(label, transport.pid);
    return started;
  };
  const client = newClient(era);
  try {
    await client.connect(transport, { timeout: connectTimeoutMs });
  } catch (error) {
    const pid = transport.pid;
    await client.close().catch(() => undefined);
    if (pid !== null) await endTree(pid);
    throw new Error(`${label}: connect failed: ${messageOf(error)}\n${stderrTail()}`, { cause: error });
  }
  const pid = transport.pid!;
  noteDescendants(pid);
  return {
    client,
    pid,
    stderrTail,
    noteChildren: () => noteDescendants(pid),
    async close() {
      // Note the tree before the client ends the root: once it is gone its children belong to init.
      noteDescendants(pid);
      await client.close().catch(() => undefined);
      await endTree(pid);
    },
  };
}

/**
 * Starts a process that prints where it listens on stderr (the first capture of `pattern`, or
 * the whole match), then connects to that with `connect`; on any failure the process is stopped.
 */
export async function openFromStderr<C>(
  label: string,
  command: string,
  args: string[],
  pattern: RegExp,
  connectTimeoutMs: number,
  connect: (where: string) => Promise<C>,
  close: (client: C) => Promise<void>,
): Promise<Endpoint<C>> {
  const child: Child = spawnChild(label, command, args, ROOT);
  let client: C;
  try {
    const [match, capture] = await child.waitForStderr(pattern, connectTimeoutMs);
    client = await connect(capture ?? match!);
  } catch (error) {
    await child.stop();
    throw new Error(`${label}: ${messageOf(error)}\n${child.stderrTail()}`, { cause: error });
  }
  noteDescendants(child.pid);
  return {
    client,
    pid: child.pid,
    stderrTail: child.stderrTail,
    noteChildren: () => noteDescendants(child.pid),
    async close() {
      await close(client).catch(() => undefined);
      await child.stop();
    },
  };
}

/** Starts a process that serves HTTP and prints its MCP URL on stderr, then connects a Client to it. */
export function openHttp(
  label: string,
  command: string,
  args: string[],
  connectTimeoutMs: number,
  era: Era = 'legacy',
  onUrl?: (url: string) => void,
): Promise<Endpoint> {
  return openFromStderr(
    label,
    command,
    args,
    /http:\/\/127\.0\.0\.1:\d+\/mcp\b/,
    connectTimeoutMs,
    async (url) => {
      onUrl?.(url);
      const client = newClient(era);
      try {
        const transport = new StreamableHTTPClientTransport(new URL(url));
        await client.connect(transport, { timeout: connectTimeoutMs });
        unlimitedAbortListeners(transport);
      } catch (error) {
        await client.close().catch(() => undefined);
        throw error;
      }
      return client;
    },
    (client) => client.close(),
  );
}

/**
 * undici's fetch adds an abort listener to each request's signal and removes it only once the
 * request is collected; the SDK transport gives all its requests one signal, so a run of thousands
 * of calls warned of a listener leak (thousands of lines) that is the driver's, not the measured
 * process's. The signal is the transport's own, hence the reach inside; without it, nothing changes.
 */
function unlimitedAbortListeners(transport: StreamableHTTPClientTransport): void {
  const signal = (transport as unknown as { _abortController?: AbortController })._abortController?.signal;
  if (signal) setMaxListeners(0, signal);
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
