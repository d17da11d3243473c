// A backend spawned as a child process speaking NDJSON JSON-RPC on its stdin/stdout. Spawned
// without a shell, with an explicit environment, in a process group of its own that is ended
// whole; its stderr and stray stdout lines go to our log, labelled and rate-limited.
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync } from 'node:fs';
import { constants } from 'node:os';
import { resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { StdioBackendConfig } from '../config/schema.js';
import type { Channel } from '../jsonrpc/channel.js';
import type { JsonRpcMessage } from '../jsonrpc/message.js';
import { readJsonLines, standInAnswer } from '../jsonrpc/json-lines.js';
import { LineWriter, readLines } from '../jsonrpc/ndjson.js';
import type { Logger } from '../log.js';
import { LimitedLog } from '../limited-log.js';
import { isNpmNoise, type StderrTail } from './stderr-tail.js';
import type { ProcessGroups } from './watchdog.js';
import { workingDirProblem } from './working-dir.js';

/** The longest stderr line logged; a longer one is dropped (and said to be). */
const STDERR_LINE_BYTES = 64 * 1024;
/** How long a backend that exited is given for its stderr to end before it counts as closed. */
const STDERR_SETTLE_MS = 250;
/** How long a backend whose stdout ended is given to exit on its own before it is stopped. */
const STDOUT_END_GRACE_MS = 1000;
/** Process groups exist everywhere but Windows. */
const GROUPS = process.platform !== 'win32';

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

/** What is spawned for a backend: its config's command, or that command wrapped in a sandbox. */
export interface LaunchSpec {
  command: string;
  args: readonly string[];
  cwd: string | undefined;
  env: Record<string, string>;
  /**
   * Open descriptors the child is given as its 3, 4, … (the sandbox's pinned paths): this
   * process's copies are closed once the child is spawned, or could not be.
   */
  fds?: readonly number[] | undefined;
}

/** Turns what a backend's config asks to run into what is spawned (the sandbox wraps it). */
export type Launcher = (spec: LaunchSpec) => LaunchSpec;

export interface StdioChannelOptions {
  config: StdioBackendConfig;
  name: string;
  log: Logger;
  maxMessageBytes: number;
  parentEnv?: NodeJS.ProcessEnv;
  /** Variables switchboard adds for this start (the bridge socket and token). */
  extraEnv?: Record<string, string>;
  /** Told each child's process group, so a switchboard that dies cannot leave it behind. */
  groups?: ProcessGroups | undefined;
  /** Wraps the command before it is spawned (the sandbox); without it the command runs as configured. */
  launch?: Launcher | undefined;
  /** Keeps the last stderr lines, so that a failure can show them. */
  stderrTail?: StderrTail | undefined;
  /** Takes secrets out of what the backend writes outside its messages (stderr, a line that is not JSON). */
  redact?: ((text: string) => string) | undefined;
}

export class StdioChannel implements Channel {
  onmessage?: (message: unknown) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  closeReason: string | undefined;
  private child: ChildProcess | undefined;
  private exited = false;
  /** close() was asked for: its stdout ending is the stop, not a fault. */
  private closing = false;
  private writer: LineWriter | undefined;
  /** Logs what the child writes outside its messages, within the stderr budget. */
  private output: LimitedLog | undefined;

  constructor(private readonly options: StdioChannelOptions) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    const { config, name, log, maxMessageBytes } = this.options;
    const asConfigured: LaunchSpec = {
      command: config.command,
      args: config.args,
      cwd: config.cwd,
      env: childEnvironment(config, this.options.parentEnv ?? process.env, this.options.extraEnv),
    };
    let launch: LaunchSpec;
    try {
      launch = this.options.launch?.(asConfigured) ?? asConfigured;
    } catch (err) {
      throw explained(err, config.command, asConfigured.env, config.cwd);
    }
    // Sandboxed, the spawned process is bwrap: it leads the group, and ending it ends every
    // process inside (its PID namespace dies with it), so the group kill below still holds.
    let child: ChildProcessByStdio<Writable, Readable, Readable>;
    try {
      child = spawn(launch.command, launch.args, {
        cwd: launch.cwd,
        env: launch.env,
        stdio: ['pipe', 'pipe', 'pipe', ...(launch.fds ?? [])],
        shell: false,
        windowsHide: true,
        // Its own process group: the child and whatever it spawns are ended together, and a
        // terminal's Ctrl-C reaches switchboard only, which then stops its children in order.
        detached: GROUPS,
        // The first three are pipes whatever follows them: the types cannot tell from a spread.
      }) as ChildProcessByStdio<Writable, Readable, Readable>;
    } finally {
      // The child has its copies (spawn returns once it has been made), or there is no child.
      for (const fd of launch.fds ?? []) closeSync(fd);
    }
    this.child = child;
    const pgid = GROUPS ? child.pid : undefined;
    if (pgid !== undefined) this.options.groups?.add(pgid);
    this.writer = new LineWriter(child.stdin);
    child.stdin.on('error', (err) => this.onerror?.(err));
    // What the child writes outside its messages (stderr, stdout lines that are not JSON, and lines
    // too long to be read as messages) is logged under one budget: a server that logs to stdout by
    // mistake floods no more than one on stderr.
    const output = (this.output = new LimitedLog(
      log,
      { perSecond: config.stderr.linesPerSecond, burst: config.stderr.burst },
      'backend output',
    ));
    readJsonLines(child.stdout, maxMessageBytes, {
      message: (value) => this.onmessage?.(value),
      notJson: (_error, text) =>
        output.warn(
          () => ({ backend: name, line: (this.options.redact?.(text) ?? text).slice(0, 200) }),
          'backend wrote a line that is not JSON; dropped',
        ),
      oversized: (line) => {
        const { bytes, limit, seen } = line;
        // What the line's ends show decides: the call an answer was for fails, naming the sizes;
        // a request of the backend's is refused by its id; a notification is dropped.
        // Its id in view but not its kind: taken for the answer it most likely is (a backend's own
        // requests are rare, and the requests waiting are the client's above this channel).
        const answer = standInAnswer(line, `backend ${name}`, 'backend_message_too_large', () => true);
        if (answer || seen.namesMethod) {
          output.warn(
            { bytes, limit, id: seen.id, answer: answer !== undefined },
            'backend message over limits.maxMessageBytes dropped',
          );
          if (answer) return this.onmessage?.(answer);
          if (line.reply) void this.writer?.write(line.reply);
          return;
        }
        // Neither end tells what it was: it may be the answer a caller waits for, and which one
        // cannot be told; stopping the backend fails its calls now instead of leaving one waiting.
        this.closeReason ??= `backend ${name} sent a message of ${bytes} bytes, over limits.maxMessageBytes (${maxMessageBytes}), that could not be told apart; switchboard stopped it`;
        log.error(
          { bytes, limit },
          'backend message over the size limit, not told apart; stopping the backend',
        );
        this.kill('SIGKILL');
      },
    });
    // Its answers can no longer come: a process that runs on without its stdout would hold every
    // call until its time limit. It is given a moment to exit on its own (its exit is then the
    // reason: a wrapper such as npx may outlive its server briefly), then stopped.
    child.stdout.once('end', () => {
      if (this.exited || this.closing) return;
      setTimeout(() => {
        if (this.exited || this.closing) return;
        this.closeReason ??= `backend ${name} closed its stdout but kept running; switchboard stopped it`;
        log.error('backend closed its stdout but kept running; stopping it');
        this.kill('SIGKILL');
      }, STDOUT_END_GRACE_MS).unref();
    });
    const tail = this.options.stderrTail;
    readLines(child.stderr, STDERR_LINE_BYTES, {
      line: (text) => {
        // Redacted here, as a line, before the log serialises it: a secret the backend wrote
        // JSON-escaped would be escaped twice there, past the log redactor's needles.
        const clean = this.options.redact?.(text) ?? text;
        // npx's own warnings are not the server speaking: kept out of the tail and the info log.
        if (isNpmNoise(text)) return void log.debug({ stderr: clean }, 'backend stderr (npm)');
        tail?.push(clean);
        output.info({ stderr: clean }, 'backend stderr');
      },
      oversized: (bytes) =>
        output.info({ bytes, limit: STDERR_LINE_BYTES }, 'backend stderr line over the limit; dropped'),
    });
    // The stream, not the exit: lines may still be read after the child has exited.
    const stderrClosed = once(child.stderr, 'close').then(() => {
      output.report();
    });
    child.on('exit', (code, signal) => {
      // What the child left running in its group (its own children) goes with it.
      if (pgid !== undefined) {
        killGroup(pgid, 'SIGKILL');
        this.options.groups?.remove(pgid);
      }
      this.exited = true;
      // bwrap passes a signal that ended the backend on as exit code 128 + its number.
      signal ??= launch !== asConfigured && code !== null ? signalOf(code - 128) : null;
      this.closeReason ??= `backend ${name} exited ${signal ? `on ${signal}` : `with code ${code}`}`;
      log.info({ code, signal }, 'backend process exited');
      // Its last stderr lines may still be on their way, and why it stopped is told with them
      // (the failure a caller, `validate` or `status` shows): closed once the stream has ended,
      // or shortly, should something the backend left behind hold the stream open.
      let told = false;
      const tell = () => {
        if (told) return;
        told = true;
        clearTimeout(settle);
        this.onclose?.();
      };
      const settle = setTimeout(tell, STDERR_SETTLE_MS);
      void stderrClosed.then(tell);
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
      throw explained(err, config.command, asConfigured.env, config.cwd);
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
    this.closing = true;
    // Closing stdin is the polite stop for an MCP stdio server; escalate if it lingers.
    child.stdin?.end();
    const exited = once(child, 'exit');
    const timer = setTimeout(() => this.kill('SIGTERM'), 2000);
    const killer = setTimeout(() => this.kill('SIGKILL'), 5000);
    timer.unref();
    killer.unref();
    await exited;
    clearTimeout(timer);
    clearTimeout(killer);
    // Counted before the stop is done, not only when its stderr closes (which may come later).
    this.output?.report();
  }

  /** Signals the child's whole process group (the child alone where there are no groups). */
  private kill(signal: NodeJS.Signals): void {
    const child = this.child;
    if (!child || this.exited) return;
    if (GROUPS && child.pid !== undefined) killGroup(child.pid, signal);
    else child.kill(signal);
  }
}

function signalOf(n: number): NodeJS.Signals | null {
  if (n <= 0) return null;
  const found = Object.entries(constants.signals).find(([, v]) => v === n);
  return found ? (found[0] as NodeJS.Signals) : null;
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: nothing left in the group.
  }
}

/**
 * A command that was not found says which PATH it was looked for on, and why that PATH may not be
 * the shell's: hosts such as Claude Desktop start switchboard without it. Unless what was not
 * found is the working directory: then that is said.
 */
function explained(
  err: unknown,
  command: string,
  env: Record<string, string>,
  cwd: string | undefined,
): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const badCwd = code === 'ENOENT' || code === 'ENOTDIR' ? workingDirProblem(cwd) : undefined;
  if (badCwd !== undefined)
    return Object.assign(
      new Error(`${badCwd} (spawn ${command} ${code}): set cwd to a directory, or leave it out`, {
        cause: err,
      }),
      { code },
    );
  if (code !== 'ENOENT') return err;
  // A path is not looked up on PATH: the file itself is missing, or (it is there) the
  // interpreter its #! line names.
  if (command.includes('/')) {
    const why = existsSync(resolve(cwd ?? '.', command))
      ? 'the file is there: the interpreter its #! line names is not'
      : 'no such file';
    return Object.assign(
      new Error(`command "${command}" not found (spawn ${command} ENOENT): ${why}`, { cause: err }),
      {
        code: 'ENOENT',
      },
    );
  }
  return Object.assign(
    new Error(
      `command "${command}" not found (spawn ${command} ENOENT) on the PATH the backend sees: ` +
        `${env['PATH'] ?? '(no PATH)'}. Hosts such as Claude Desktop start servers without your ` +
        `shell's PATH: give the command as an absolute path, or set env: { PATH: … } on this server`,
      { cause: err },
    ),
    { code: 'ENOENT' },
  );
}
