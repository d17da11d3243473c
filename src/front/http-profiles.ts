// Which catalog profile an HTTP request is for (`<http.path>/<profile>`), and whether its caller
// may use it (catalog.profiles.<name>.credentials: API key names, OAuth subjects).
import type { Caller } from '../call/context.js';
import type { Config } from '../config/schema.js';

type Profiles = Config['catalog']['profiles'];
type Credentials = NonNullable<Profiles[string]['credentials']>;

/**
 * The profile a path names: undefined for the plain endpoint, null for a path that is neither it
 * nor `<endpoint>/<a configured profile>`.
 */
export function profileOf(
  path: string,
  endpoint: string,
  profiles: Profiles | undefined,
): string | undefined | null {
  if (path === endpoint) return undefined;
  const base = endpoint.endsWith('/') ? endpoint : `${endpoint}/`;
  if (!path.startsWith(base)) return null;
  let name: string;
  try {
    name = decodeURIComponent(path.slice(base.length));
  } catch {
    return null;
  }
  return profiles && Object.hasOwn(profiles, name) ? name : null;
}

/** Whether `caller` is among the credentials; a profile without any is open to the endpoint's callers. */
export function mayUseProfile(caller: Caller, credentials: Credentials | undefined): boolean {
  if (!credentials) return true;
  if (caller.kind !== 'host') return false;
  const [kind, ...rest] = caller.id.split(':');
  const id = rest.join(':');
  if (kind === 'key') return credentials.keys.includes(id);
  if (kind === 'oauth') return credentials.subjects.includes(id);
  return false;
}
