// A backend spawned as a child process speaking NDJSON JSON-RPC on its stdin/stdout. Spawned
// without a shell and with an explicit environment; its stderr goes to our log, labelled.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { StdioBackendConfig } from '../config/schema.js';
import type { Channel } from '../jsonrpc/channel.js';
import type { JsonRpcMessage } from '../jsonrpc/message.js';
import { LineWriter, readLines } from '../jsonrpc/ndjson.js';
import type { Logger } from '../log.js';

/** Parent variables a child gets unless its config names its own list. */
export const DEFAULT_INHERITED_ENV = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'TERM',
  'TMPDIR',
  'TZ',
].concat(
  process.platform === 'win32' ? ['SystemRoot', 'APPDATA', 'LOCALAPPDATA', 'PATHEXT', 'USERPROFILE'] : [],
);

export function childEnvironment(
  config: StdioBackendConfig,
  parent: NodeJS.ProcessEnv,
  extra: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of config.inheritEnv ?? DEFAULT_INHERITED_ENV) {
    const v = parent[name];
    if (v !== undefined) env[name] = v;
  }
  return Object.assign(env, config.env, extra);
}

export interface StdioChannelOptions {
  config: StdioBackendConfig;
  name: string;
  log: Logger;
  maxMessageBytes: number;
  parentEnv?: NodeJS.ProcessEnv;
  /** Variables switchboard adds for this start (the bridge socket and token). */
  extraEnv?: Record<string, string>;
}

export class StdioChannel implements Channel {
  onmessage?: (message: unknown) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  closeReason: string | undefined;
  private child: ChildProcess | undefined;
  private exited = false;
  private writer: LineWriter | undefined;

  constructor(private readonly options: StdioChannelOptions) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    const { config, name, log, maxMessageBytes } = this.options;
    const child = spawn(config.command, config.args, {
      cwd: config.cwd,
      env: childEnvironment(config, this.options.parentEnv ?? process.env, this.options.extraEnv),
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
      windowsHide: true,
    });
    this.child = child;
    this.writer = new LineWriter(child.stdin);
    child.stdin.on('error', (err) => this.onerror?.(err));
    readLines(child.stdout, maxMessageBytes, {
      line: (text) => {
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          log.warn(
            { backend: name, line: text.slice(0, 200) },
            'backend wrote a line that is not JSON; dropped',
          );
          return;
        }
        this.onmessage?.(value);
      },
      oversized: (bytes) => {
        // A dropped line may be the answer a caller waits for, and which one cannot be told:
        // stopping the backend fails its calls now instead of leaving one waiting forever.
        this.closeReason ??= `backend ${name} sent a message of ${bytes} bytes, over limits.maxMessageBytes (${maxMessageBytes}); switchboard stopped it`;
        log.error(
          { bytes, limit: maxMessageBytes },
          'backend message over the size limit; stopping the backend',
        );
        child.kill();
      },
    });
    readLines(child.stderr, 64 * 1024, {
      line: (text) => log.info({ stderr: text }, 'backend stderr'),
      oversized: () => {},
    });
    child.on('exit', (code, signal) => {
      this.exited = true;
      this.closeReason ??= `backend ${name} exited ${signal ? `on ${signal}` : `with code ${code}`}`;
      log.info({ code, signal }, 'backend process exited');
      this.onclose?.();
    });
    const spawned = once(child, 'spawn');
    const failed = once(child, 'error').then(([err]) => {
      throw err;
    });
    try {
      await Promise.race([spawned, failed]);
    } catch (err) {
      // A child that never started emits no exit: mark it gone so close() does not wait for one.
      this.exited = true;
      throw err;
    }
    child.on('error', (err) => this.onerror?.(err));
  }

  send(message: JsonRpcMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.exited || !stdin.writable)
      return Promise.reject(new Error('backend process is not running'));
    if (this.writer!.write(message)) return Promise.resolve();
    return once(stdin, 'drain').then(() => undefined);
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.exited) return;
    // Closing stdin is the polite stop for an MCP stdio server; escalate if it lingers.
    child.stdin?.end();
    const exited = once(child, 'exit');
    const timer = setTimeout(() => child.kill('SIGTERM'), 2000);
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
    timer.unref();
    killer.unref();
    await exited;
    clearTimeout(timer);
    clearTimeout(killer);
  }
}
