// What a sandboxed backend sees of the file system: the whole root read-only, a private /tmp, its
// caches and the paths its config lists, and none of switchboard's own files, as an ordered list of
// mounts (a later mount lies over an earlier one, so what is hidden stays hidden).
import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

export type Mount =
  { kind: 'root' } | { kind: 'read' | 'write' | 'cache' | 'hide-dir' | 'hide-file'; path: string };

/** Switchboard's own files: what no backend may read or write. */
export interface Protected {
  /** Directories that are switchboard's alone (its state directory): hidden whole. */
  readonly dirs: readonly string[];
  /** Single files (config, vault, key, trust database): their directory is hidden where it can be. */
  readonly files: readonly string[];
}

export interface ViewInput {
  readonly protect: Protected;
  readonly read: readonly string[];
  readonly write: readonly string[];
  readonly hide: readonly string[];
  /** The backend's working directory: visible, read-only unless within a write path. */
  readonly cwd: string;
  /** The child's environment: HOME and cache locations come from it. */
  readonly env: Readonly<Record<string, string>>;
  /** Bound in read-write after everything else: the bridge socket. */
  readonly sockets: readonly string[];
  /**
   * Write paths of the other sandboxed backends: a link in one of them may have been made by that
   * backend, so it is not followed for this one either.
   */
  readonly othersWrite: readonly string[];
  /** The executable's absolute path (as execvp finds it): its directory must stay visible. */
  readonly command: string;
}

/** Directories a private /tmp, /proc and /dev replace: what lies under them is not visible anyway. */
const REPLACED = ['/tmp', '/proc', '/dev'];

export function sandboxView(input: ViewInput): Mount[] {
  // Every path where it really is: bwrap cannot bind one whose way goes through a symbolic link
  // (a `write` path that is one would fail the backend's start), and what is hidden is compared
  // with what is bound where both really are. Through the link the backend reaches the same place.
  const writable = writableBy(input);
  const bindable = (path: string) => followedLinks(path, writable);
  const read = input.read.map(bindable);
  const write = input.write.map(bindable);
  const caches = cacheDirs(input.env).map(bindable);
  const cwd = bindable(input.cwd);
  const bound = [cwd, ...read, ...write];
  const mounts: Mount[] = [{ kind: 'root' }];
  // The root is there read-only already: a read-only path is bound again only where the private
  // /tmp, /proc or /dev replaced it. Bound anywhere else it would only lay the host's view back
  // over what comes before it: `/` as the working directory (a service's default) would bring
  // back the host's /tmp and /proc, and a home directory would make its caches read-only.
  for (const path of [cwd, ...read])
    if (REPLACED.some((r) => within(path, r))) mounts.push({ kind: 'read', path });
  for (const path of caches) mounts.push({ kind: 'cache', path });
  for (const path of write) mounts.push({ kind: 'write', path });
  // Laid over the hides: only a socket reached through no link a backend could have made.
  const sockets = input.sockets.map((path) => socketPath(path, writable));
  const needed = [
    ...bound,
    ...caches,
    ...sockets,
    realPath(input.env['HOME'] ?? '/'),
    realPath(dirname(input.command)),
  ];
  for (const hide of hidden(input, needed)) {
    if (!existsSync(hide)) continue; // bwrap cannot lay anything over a path that is not there
    if (!visible(hide, bound)) continue;
    mounts.push({ kind: isDirectory(hide) ? 'hide-dir' : 'hide-file', path: hide });
  }
  for (const path of sockets) mounts.push({ kind: 'write', path });
  return mounts;
}

/** Where any sandboxed backend may write (this one's write paths, the others', the caches), as real paths. */
export function writableBy(input: Pick<ViewInput, 'write' | 'othersWrite' | 'env'>): string[] {
  return [...input.write, ...input.othersWrite, ...cacheDirs(input.env)].map(realPath);
}

/** How many links one path may go through (as the kernel's own limit, ELOOP). */
const MAX_LINKS = 40;

/**
 * Where a path to bind really is, each link on its way followed hop by hop, its target walked the
 * same way; refused when a link lies in a directory a backend may write (`writable`, real paths):
 * that backend could have made it, to be given what it points at the next time this one starts.
 */
export function followedLinks(path: string, writable: readonly string[]): string {
  const pending = resolve(path).split(sep).filter(Boolean);
  let at: string = sep;
  for (let links = 0; pending.length > 0;) {
    const part = pending.shift()!;
    if (part === '.') continue;
    if (part === '..') {
      at = dirname(at);
      continue;
    }
    const next = join(at, part);
    let target: string | undefined;
    try {
      target = lstatSync(next).isSymbolicLink() ? readlinkSync(next) : undefined;
    } catch {
      return join(next, ...pending); // not made yet
    }
    if (target === undefined) {
      at = next;
      continue;
    }
    if (writable.some((w) => within(at, w)))
      throw new Error(
        `sandbox path ${path} goes through ${next}, a symbolic link in ${at}, which a backend may write (it could have made it): give the path it leads to instead`,
      );
    if (++links > MAX_LINKS) throw new Error(`sandbox path ${path} goes through too many symbolic links`);
    pending.unshift(...target.split(sep).filter(Boolean));
    if (isAbsolute(target)) at = sep;
  }
  return at;
}

/** The bridge socket where it really is, reached through no link a backend could have made; and a socket. */
function socketPath(path: string, writable: readonly string[]): string {
  const real = followedLinks(path, writable);
  let socket = false;
  try {
    socket = lstatSync(real).isSocket();
  } catch {
    // not there: said below
  }
  if (!socket) throw new Error(`bridge socket ${path} is not a socket any more: the backend is not given it`);
  return real;
}

/**
 * Where a path really is: bwrap lays a mount on the path it is given and cannot make one whose
 * way goes through a symbolic link (a state directory reached through one, say).
 */
export function realPath(path: string): string {
  const absolute = resolve(path);
  // A path not made yet: where its nearest existing ancestor really is, and the rest after it.
  for (let at = absolute; ; at = dirname(at)) {
    try {
      return join(realpathSync(at), relative(at, absolute));
    } catch {
      if (dirname(at) === at) return absolute;
    }
  }
}

/**
 * The paths to hide, strongest first: whole directories that are switchboard's or the user's to
 * hide; then, per protected file, its directory when nothing the backend needs lies inside it (it
 * then does not exist for the backend, nor do files created there later), else the file alone.
 */
function hidden(input: ViewInput, needed: readonly string[]): string[] {
  const out: string[] = [];
  const add = (path: string) => {
    if (!out.some((h) => within(path, h))) out.push(path);
  };
  for (const dir of input.protect.dirs) add(realPath(dir));
  for (const path of input.hide) add(realPath(path));
  for (const file of input.protect.files.map(realPath)) {
    const dir = dirname(file);
    const shared = dir.split(sep).length < 3 || needed.some((n) => within(n, dir));
    add(shared ? file : dir);
  }
  return out;
}

/** Where npx, npm and uv keep what they fetch: writable, or a package runner fails at start. */
export function cacheDirs(env: Readonly<Record<string, string>>): string[] {
  const home = env['HOME'];
  const dirs = [
    env['npm_config_cache'] ?? (home && join(home, '.npm')),
    env['XDG_CACHE_HOME'] ?? (home && join(home, '.cache')),
    env['UV_CACHE_DIR'],
    home && join(home, '.local', 'share', 'uv'),
  ];
  return [...new Set(dirs.filter((d): d is string => !!d).map((d) => resolve(d)))];
}

/** Whether `path` is `dir` or lies inside it. */
export function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** Under /tmp (or /proc, /dev) only what is bound in is there. */
function visible(path: string, bound: readonly string[]): boolean {
  return !REPLACED.some((r) => within(path, r)) || bound.some((b) => within(path, b));
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}
