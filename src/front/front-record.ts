// Where this user's running HTTP fronts listen, kept in the state directory (hidden from sandboxed
// backends): one file per process under `http-fronts/`, written once the front listens and removed
// when it closes. A client that sends the local token by itself (`workflows run --url`) sends it
// only to a port one of them holds, so a URL that names some other loopback listener (a backend's)
// does not get it.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from '../state/process-alive.js';
import { stateDirFile } from '../state/sqlite-file.js';

const DIR = 'http-fronts';

interface FrontRecord {
  url: string;
  pid: number;
}

function recordsDir(env: NodeJS.ProcessEnv): string {
  return stateDirFile(DIR, env);
}

/** Notes that this process serves `url`; the returned function forgets it (at close). */
export function recordFront(url: string, env: NodeJS.ProcessEnv = process.env): () => void {
  const dir = recordsDir(env);
  const file = join(dir, `${process.pid}-${new URL(url).port}.json`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(file, JSON.stringify({ url, pid: process.pid } satisfies FrontRecord) + '\n', {
    mode: 0o600,
  });
  return () => rmSync(file, { force: true });
}

/** The URLs of fronts whose process still runs; records of processes gone are removed. */
function liveFronts(env: NodeJS.ProcessEnv): string[] {
  const dir = recordsDir(env);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const urls: string[] = [];
  for (const name of names) {
    const file = join(dir, name);
    try {
      const record = JSON.parse(readFileSync(file, 'utf8')) as Partial<FrontRecord>;
      if (typeof record.url !== 'string' || !URL.canParse(record.url)) continue;
      if (processAlive(Number(record.pid))) urls.push(record.url);
      else rmSync(file, { force: true });
    } catch {
      // Being written, or not one of ours: not a front to send anything to.
    }
  }
  return urls;
}

/** The names of the loopback addresses a front on loopback holds together (net/loopback-twin.ts). */
const TWINNED = new Set(['localhost', '127.0.0.1', '::1']);

/**
 * The loopback names a front listening on `host` holds: both loopback addresses for a loopback
 * host or the dual-stack wildcard `::`, only 127.0.0.1 for the IPv4 wildcard (`[::1]` at its port
 * may be another process's, and `localhost` may resolve to it), none for another address.
 */
function loopbackHeldBy(host: string): ReadonlySet<string> {
  if (TWINNED.has(host) || host === '::') return TWINNED;
  if (host === '0.0.0.0') return new Set(['127.0.0.1']);
  return new Set();
}

/**
 * Whether `url` reaches a front of this user's running switchboards: the same port, and the same
 * host or a loopback name the front holds. Not 127.0.0.2 and the like: another process may listen
 * there at the same port.
 */
export function isRunningFront(url: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!URL.canParse(url)) return false;
  const asked = new URL(url);
  return liveFronts(env).some((front) => {
    const known = new URL(front);
    if (portOf(known) !== portOf(asked)) return false;
    const host = bare(asked.hostname);
    return host === bare(known.hostname) || loopbackHeldBy(bare(known.hostname)).has(host);
  });
}

/** A URL's port, the scheme's default when it names none. */
const portOf = (u: URL) => u.port || (u.protocol === 'https:' ? '443' : '80');

/** A URL's hostname without the brackets of an IPv6 address. */
const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, '');
