// The sandbox stdio backends run in: probed once at start (said once in the log when there is
// none), then asked for each backend's launcher, which wraps its command in bwrap with its view.
import { mkdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Config, StdioBackendConfig } from '../config/schema.js';
import type { Launcher } from '../backends/stdio-channel.js';
import type { Logger } from '../log.js';
import { defaultTrustDbPath } from '../trust/trust-db.js';
import { defaultStateDbPath } from '../state/state-db.js';
import { trustKeysPath } from '../trust/trust-keys.js';
import { checkpointFilePath } from '../trust/audit-checkpoints.js';
import { defaultVaultPath } from '../vault/open.js';
import { hiddenByPrivateTmp, privateTmpProblem } from './private-tmp.js';
import { BRIDGE_PATH_ENV } from '../public/bridge-client/constants.js';
import { bwrapArgs } from './bwrap-args.js';
import { pinMounts } from './pinned-paths.js';
import { findCommand } from './command-path.js';
import { BY_NAME, probeSandbox, type SandboxProbe } from './sandbox-probe.js';
import {
  cacheDirs,
  followedLinks,
  realPath,
  sandboxView,
  within,
  writableBy,
  type Protected,
} from './sandbox-view.js';

export interface SandboxOptions {
  config: Config;
  /** The files the configuration was read from (main file, policy file): hidden from backends. */
  configFiles?: readonly string[] | undefined;
  log: Logger;
  /** Where the default state paths are worked out from (default: process.env). */
  env?: NodeJS.ProcessEnv | undefined;
  platform?: NodeJS.Platform | undefined;
}

export class Sandbox {
  private constructor(
    /** undefined: sandbox.mode is none, nothing was probed. */
    readonly probe: SandboxProbe | undefined,
    readonly protect: Protected,
    private readonly log: Logger,
    /**
     * The device and inode at start of each directory whose content every backend's view must
     * hide: the state directories, and each directory holding one of switchboard's files.
     */
    private readonly marks: ReadonlyMap<string, string> = new Map(),
  ) {}

  /** Probes once and says once what backends will run in; rejects when mode is required and there is none. */
  static async open(options: SandboxOptions): Promise<Sandbox> {
    const { config, log } = options;
    const { mode, bwrap } = config.sandbox;
    const probe = mode === 'none' ? undefined : await probeSandbox(bwrap, options.platform, options.env);
    if (probe && !probe.available && mode === 'required')
      throw new Error(`sandbox.mode is required, but no sandbox can be made: ${probe.reason}`);
    if (!probe)
      log.warn('sandbox.mode is none: stdio backends run unsandboxed, seeing what switchboard sees');
    else if (!probe.available)
      log.warn(
        { reason: probe.reason },
        `no sandbox available (${probe.reason}): stdio backends run unsandboxed, seeing what switchboard sees`,
      );
    else log.info({ bwrap: probe.bwrap }, 'stdio backends run in a bubblewrap sandbox');
    if (probe?.available && !probe.pins)
      log.warn({ bwrap: probe.bwrap, said: probe.noPins }, `sandboxed with ${probe.bwrap}, but ${BY_NAME}`);
    const protect = protectedPaths(options);
    if (!probe?.available) return new Sandbox(probe, protect, log);
    makeHideable(protect.dirs, log);
    const marks = new Map<string, string>();
    // A file's directory too: moved whole, the file would be where no view hides it.
    for (const dir of new Set([...protect.dirs, ...protect.files.map((f) => dirname(resolve(f)))])) {
      const mark = markOf(dir);
      if (mark) marks.set(dir, mark);
    }
    return new Sandbox(probe, protect, log, marks);
  }

  get available(): boolean {
    return this.probe?.available === true;
  }

  /**
   * Refuses to lay out a view while a directory it must hide (or holding a file it must) is not
   * the one there at start: a backend with a write path above it may have moved it (renaming its
   * parent), and a view laid by path would then leave it, elsewhere, in sight. Fails closed: the
   * backend is not started.
   */
  private checkHidden(backend: string): void {
    for (const [dir, mark] of this.marks) {
      if (markOf(dir) === mark) continue;
      throw new Error(
        `${dir} is gone or was replaced since switchboard started (moved by a backend that may write above it?): backend ${backend} is not started, as its sandbox could not hide what it held; restart switchboard`,
      );
    }
  }

  /** How one backend's command is wrapped; undefined when it runs unsandboxed. */
  launcherFor(name: string, backend: StdioBackendConfig, config: Config): Launcher | undefined {
    const probe = this.probe;
    if (!probe?.available) return undefined;
    const own = backend.sandbox;
    if (own === 'none') {
      this.log.warn(
        { backend: name },
        `backend ${name} has sandbox: none; it runs unsandboxed, seeing what switchboard sees`,
      );
      return undefined;
    }
    const top = config.sandbox;
    // Compared where both really are: a write path may be a link to a parent of the state directory.
    const above = [...top.write, ...(own?.write ?? [])].filter((w) =>
      [...this.marks.keys()].some((d) => within(realPath(d), realPath(w))),
    );
    if (above.length > 0)
      this.log.warn(
        { backend: name, write: above },
        `backend ${name} may write in ${above.join(', ')}, above switchboard's state or files: should it move them away, it is not started again`,
      );
    const writing = othersWriting(config, name);
    for (const n of nestedWrites([...top.write, ...(own?.write ?? [])], writing))
      this.log.warn(
        { backend: name, path: n.path, inside: n.inside, by: n.backend },
        `backend ${name}'s write path ${n.path} lies inside ${n.inside}, which backend ${n.backend} may write: as ${name} starts, ${n.backend} could have it bound elsewhere in ${name}'s view; give them paths that do not nest`,
      );
    const hidden = hiddenByPrivateTmp(backend, top);
    if (hidden.length > 0) {
      const { why, fix } = privateTmpProblem(name, hidden);
      this.log.warn({ backend: name, fix }, `backend ${name} ${why}: ${fix}`);
    }
    return (spec) => {
      this.checkHidden(name);
      // Absolute: bwrap's --chdir reads a relative one from /, not from switchboard's directory.
      const cwd = resolve(spec.cwd ?? process.cwd());
      // Where the command really is: a missing one fails here, naming it; its directory is one the
      // backend needs (sandbox-view keeps it visible).
      const found = findCommand(spec.command, spec.env['PATH'], cwd);
      const write = [...top.write, ...(own?.write ?? [])];
      const env = { ...spec.env };
      // A TMPDIR outside the view would fail every temporary file; /tmp is private and writable.
      if (env['TMPDIR'] !== undefined && !write.some((w) => within(env['TMPDIR']!, w)))
        env['TMPDIR'] = '/tmp';
      makeCaches(env);
      const others = writing.map((o) => o.path);
      const writable = writableBy({ write, othersWrite: others, env });
      makeWritable(write, (w) => followedLinks(w, writable));
      const socket = env[BRIDGE_PATH_ENV];
      const mounts = sandboxView({
        protect: this.protect,
        read: [...top.read, ...(own?.read ?? [])],
        write,
        hide: [...top.hide, ...(own?.hide ?? [])],
        cwd,
        env,
        sockets: socket ? [socket] : [],
        command: found,
        othersWrite: others,
      });
      // Each source opened now and bound from its descriptor: what was checked is what is bound.
      const pinned = probe.pins ? pinMounts(mounts) : undefined;
      const args = bwrapArgs({
        mounts: pinned?.mounts ?? mounts,
        pinned: pinned?.childFd,
        network: own?.network ?? top.network,
        // Where it really is: one under /tmp reached through a link is bound there, not at the link.
        chdir: realPath(cwd),
        command: spec.command,
        args: spec.args,
      });
      return { command: probe.bwrap, args, cwd, env, ...(pinned && { fds: pinned.fds }) };
    };
  }
}

/** The write paths of every other sandboxed stdio backend, each with whose it is. */
function othersWriting(config: Config, self: string): { backend: string; path: string }[] {
  return Object.entries(config.servers).flatMap(([name, entry]) => {
    const sandbox =
      name === self ? undefined : (entry as { sandbox?: StdioBackendConfig['sandbox'] }).sandbox;
    return typeof sandbox === 'object' ? (sandbox.write ?? []).map((path) => ({ backend: name, path })) : [];
  });
}

/**
 * This backend's write paths that lie inside another backend's, with whose: bwrap finds where a
 * mount goes by name, so that backend, renaming or linking above such a path as this one starts,
 * could have it bound elsewhere in this one's view (over its code, say). Compared where both are.
 */
function nestedWrites(
  write: readonly string[],
  others: readonly { backend: string; path: string }[],
): { path: string; inside: string; backend: string }[] {
  const theirs = others.map((o) => ({ ...o, real: realPath(o.path) }));
  return write.flatMap((path) => {
    const real = realPath(path);
    return theirs
      .filter((o) => real !== o.real && within(real, o.real))
      .map((o) => ({ path, inside: o.path, backend: o.backend }));
  });
}

/** A directory's device and inode; undefined when it is not there. */
function markOf(dir: string): string | undefined {
  try {
    const st = statSync(dir);
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

/** Switchboard's state directory and every file holding its configuration, secrets or trust. */
function protectedPaths(options: SandboxOptions): Protected {
  const { config } = options;
  const env = options.env ?? process.env;
  const trustDb = config.audit.path ?? defaultTrustDbPath(env);
  const stateDb = config.state.path ?? defaultStateDbPath(env);
  const vault = config.vault.file ?? defaultVaultPath(env);
  const files = [
    ...(options.configFiles ?? []),
    vault,
    ...(config.vault.keyFile ? [config.vault.keyFile] : []),
    // SQLite keeps recent writes beside the file until a checkpoint.
    ...['', '-wal', '-shm', '-journal'].map((suffix) => trustDb + suffix),
    ...['', '-wal', '-shm', '-journal'].map((suffix) => stateDb + suffix),
    // The A2A agent's tasks, when a2a.serve.tasks.path puts them outside the state directory.
    ...(config.a2a.serve.tasks.path
      ? ['', '-wal', '-shm', '-journal'].map((suffix) => config.a2a.serve.tasks.path + suffix)
      : []),
    // The keys approvals and checkpoints are signed with, and the checkpoint kept outside the db.
    trustKeysPath(trustDb),
    checkpointFilePath(trustDb),
  ];
  // admin.stateDir holds the admin token: hidden whole like the state directory.
  const adminDir = config.admin.stateDir ? [config.admin.stateDir] : [];
  // The default state directory too, when XDG_STATE_HOME moved this one's: another switchboard
  // of this user's (a host's `up --stdio`, say) keeps its tokens and trust database there.
  const usual = dirname(defaultTrustDbPath({}));
  return { dirs: [...new Set([dirname(defaultTrustDbPath(env)), usual, ...adminDir])], files };
}

/**
 * The directories to hide, made now when missing (owner-only): bwrap can hide only what exists,
 * and what a directory made later would hold (the HTTP front's token, written at its start, after
 * the backends') would show through the backend's view of `/`.
 */
function makeHideable(dirs: readonly string[], log: Logger): void {
  for (const dir of dirs) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      log.warn(
        { dir, err: (err as Error).message },
        `cannot make ${dir}: what switchboard keeps there later is not hidden from sandboxed backends`,
      );
    }
  }
}

/**
 * The `write` directories, made when missing (owner-only): a backend given a place to keep its data
 * finds it on its first start, rather than bwrap refusing to start it for a path that is not there.
 */
function makeWritable(paths: readonly string[], where: (path: string) => string): void {
  // Only a path that says where it is: `~/x` or `data` would be made under switchboard's own
  // working directory (the config does not expand `~`), which is not what was meant. Made where
  // it really leads, past no link a backend could have made (`where` refuses those: nothing made).
  for (const path of paths.filter((p) => isAbsolute(p))) {
    const dir = where(path);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch {
      // A file there, or not ours to make: bwrap's own error names the path.
    }
  }
}

/** Package runners fail when their cache cannot be made: made here, where it is not read-only. */
function makeCaches(env: Record<string, string>): void {
  for (const dir of cacheDirs(env).slice(0, 2)) {
    try {
      mkdirSync(dir, { recursive: true });
    } catch {
      // Not ours to make (a read-only home): bwrap skips it and the backend does without.
    }
  }
}
