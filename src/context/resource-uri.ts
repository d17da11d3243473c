// How a context entry is named as an MCP resource: `context://<scope>/<key>`, each part
// percent-encoded so that the URI is already in the normal form the policy judges (a rule on
// `context://team:x/*` sees exactly the URI a host reads), and read back only from that form.
export const CONTEXT_SCHEME = 'context';
export const CONTEXT_TEMPLATE = `${CONTEXT_SCHEME}://{scope}/{key}`;

const PREFIX = `${CONTEXT_SCHEME}://`;

/** The scope's kind stays as it is (`team:`), its id is encoded: it becomes the URI's authority. */
function encodeScope(scope: string): string {
  const colon = scope.indexOf(':');
  return colon === -1 ? scope : `${scope.slice(0, colon + 1)}${encodeURIComponent(scope.slice(colon + 1))}`;
}

/** Slashes in a key stay path separators; everything else a URI cannot hold as itself is encoded. */
function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

export function contextUri(scope: string, key: string): string {
  return `${PREFIX}${encodeScope(scope)}/${encodeKey(key)}`;
}

/**
 * The scope and key a `context://` URI names, or undefined when it names none: only the one
 * spelling `contextUri` gives is read, so no second spelling can reach what a rule about the
 * first denies.
 */
export function parseContextUri(uri: string): { scope: string; key: string } | undefined {
  if (!uri.startsWith(PREFIX)) return undefined;
  const rest = uri.slice(PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) return undefined;
  let scope: string;
  let key: string;
  try {
    scope = decodeURIComponent(rest.slice(0, slash));
    key = decodeURIComponent(rest.slice(slash + 1));
  } catch {
    return undefined;
  }
  return contextUri(scope, key) === uri ? { scope, key } : undefined;
}
