// The URI prefix of each backend, and the check that no two backends share one: a cross-field rule zod cannot express.
//
// Resource URIs are namespaced as `<prefix>+<original-uri>` (`memory+file:///notes`), which makes
// the prefix the front of a URI scheme. Schemes are case-insensitive and allow letters, digits,
// `+ - .` only (RFC 3986 §3.1), so the prefix is lowercased and `_` becomes `-`. That mapping is
// lossy: `My_Server` and `my-server` end up the same, and the catalog could not tell their
// resources apart, so the loader refuses such a pair up front.
import { formatPath } from './errors.js';
import type { BackendConfig, Config } from './schema.js';

/** The URI prefix of a backend: its `prefix`, or its name, lowercased with `_` replaced by `-`. */
export function uriPrefix(name: string, backend: Pick<BackendConfig, 'prefix'>): string {
  return (backend.prefix ?? name).toLowerCase().replaceAll('_', '-');
}

/** Problems with the URI prefixes of the enabled backends; disabled ones are skipped because they expose no resources. */
export function checkUriPrefixes(servers: Config['servers']): { path: PropertyKey[]; message: string }[] {
  const problems: { path: PropertyKey[]; message: string }[] = [];
  const owners = new Map<string, string>();
  for (const [name, backend] of Object.entries(servers)) {
    if (backend.disabled) continue;
    const prefix = uriPrefix(name, backend);
    const path: PropertyKey[] =
      backend.prefix === undefined ? ['servers', name] : ['servers', name, 'prefix'];
    const source = backend.prefix === undefined ? 'its name' : 'its prefix';
    if (!/^[a-z]/.test(prefix)) {
      problems.push({
        path,
        message: `expected a URI prefix that starts with a letter, got '${prefix}' (from ${source}): resource URIs become '${prefix}+<uri>', and a URI scheme must start with a letter; set prefix to a name that does`,
      });
      continue;
    }
    const other = owners.get(prefix);
    if (other === undefined) {
      owners.set(prefix, name);
      continue;
    }
    problems.push({
      path,
      message: `URI prefix '${prefix}' (from ${source}) collides with ${formatPath(['servers', other])}: resource URIs of both would read '${prefix}+<uri>'; give one of them a different prefix`,
    });
  }
  return problems;
}
