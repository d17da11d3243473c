// Resource URIs in the one form the policy judges: scheme and host lower-cased, percent-encoding
// normalised, dot segments removed, `file://localhost/` as `file:///`; the backend receives that
// form with the host's letters (and userinfo) as the caller wrote them (normalForms' `sent`). A URI whose meaning depends
// on how often or how loosely a backend decodes it is refused rather than guessed at, so no
// spelling reaches what a rule about another spelling denies.

/** A URI that has no one meaning the policy could judge. */
export class UriError extends Error {
  override name = 'UriError';
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
/** What may stand in a URI as itself (RFC 3986: unreserved, gen-delims, sub-delims). */
const ALLOWED_RAW = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]$/;
const HEX = /^[0-9A-Fa-f]{2}$/;

/**
 * The normal form of an absolute URI (RFC 3986 §6.2.2, with dot segments removed as in §5.2.4):
 * the form rules judge (normalForms' `judged`).
 */
export function normalUri(uri: string, options: { template?: boolean } = {}): string {
  return normalForms(uri, options).judged;
}

/**
 * Both forms of a URI, from one reading of it: `judged` (what rules and conditions see: host
 * lower-cased, no userinfo) and `sent` (what the backend is sent: the same, with the host's case
 * and userinfo as written). Throws UriError for a URI that cannot be normalised: no scheme,
 * malformed or double percent-encoding, an encoded NUL, control characters, an encoded `/` or `\`
 * that would hide a `.` or `..` segment from the policy, dot segments in a path that is not
 * hierarchical, or a file URI naming another machine.
 */
export function normalForms(
  uri: string,
  options: { template?: boolean } = {},
): { judged: string; sent: string } {
  const m = SCHEME.exec(uri);
  if (!m) throw new UriError('it has no scheme (a resource URI is absolute)');
  const scheme = m[1]!.toLowerCase();
  let rest = encodeRaw(uri.slice(m[0].length), options.template === true);
  let fragment: string | undefined;
  let query: string | undefined;
  const hash = rest.indexOf('#');
  if (hash !== -1) [rest, fragment] = [rest.slice(0, hash), rest.slice(hash + 1)];
  const question = rest.indexOf('?');
  if (question !== -1) [rest, query] = [rest.slice(0, question), rest.slice(question + 1)];

  let authority: Authority | undefined;
  let path = rest;
  if (rest.startsWith('//')) {
    const end = rest.indexOf('/', 2);
    authority = normalAuthority(scheme, rest.slice(2, end === -1 ? undefined : end));
    path = end === -1 ? '' : rest.slice(end);
  }
  path = percent(path);
  if (/%25[0-9A-F]{2}/i.test(path))
    throw new UriError('its path is percent-encoded twice (%25 before another escape)');
  if (path.includes('%00')) throw new UriError('its path encodes a NUL character');
  for (const segment of path.split('/')) hiddenDots(segment);

  if (scheme === 'file') {
    // A file URI always names an absolute path, and the file system ignores repeated slashes:
    // `file:/x`, `file:x` and `file:////x` all open /x, so they are all `file:///x` here. No file
    // name holds a `/`: an encoded one is the separator a file system reads it as.
    authority ??= { judged: '', sent: '' };
    if (authority.judged !== '')
      throw new UriError('a file URI names a file of this machine: its host may only be empty or localhost');
    if (path !== '' && !path.startsWith('/')) path = `/${path}`;
    path = path.replace(/%2F/g, '/').replace(/\/{2,}/g, '/');
  }
  if (authority !== undefined || path.startsWith('/')) path = removeDotSegments(path);
  else if (path.split('/').some((s) => s === '.' || s === '..'))
    throw new UriError('it has . or .. segments in a path that is not hierarchical');

  const after =
    path +
    (query === undefined ? '' : `?${percent(query)}`) +
    (fragment === undefined ? '' : `#${percent(fragment)}`);
  if (authority === undefined) return { judged: `${scheme}:${after}`, sent: `${scheme}:${after}` };
  return { judged: `${scheme}://${authority.judged}${after}`, sent: `${scheme}://${authority.sent}${after}` };
}

/**
 * A policy pattern over URIs (`*` for any run of characters), normalised as the URIs it is matched
 * against are. A pattern that is not a URI (`*`, `*secret*`) is kept as written.
 */
export function normalUriPattern(pattern: string): string {
  try {
    // Patterns also match URI templates (completions, listed templates): their braces stay.
    return normalUri(pattern, { template: true });
  } catch (err) {
    if (err instanceof UriError) return pattern;
    throw err;
  }
}

/** An authority as rules judge it and as the backend is sent it. */
interface Authority {
  judged: string;
  sent: string;
}

/**
 * Host lower-cased for the form judged, as spelled for the form sent; a file URI's `localhost` is
 * the empty host, and its host, a machine's name, is lower-cased in both. Userinfo is left out of
 * the form judged (a backend may resolve `vault` and `user@vault` alike: rules judge them as one)
 * and kept in the form sent; an empty port (`vault:`) is no port.
 */
function normalAuthority(scheme: string, raw: string): Authority {
  const authority = percent(raw);
  if (authority.includes('%00')) throw new UriError('its authority encodes a NUL character');
  const at = authority.lastIndexOf('@');
  const userinfo = at === -1 ? '' : authority.slice(0, at + 1);
  const hostPort = authority.slice(at + 1);
  const colon = hostPort.startsWith('[')
    ? hostPort.indexOf(':', hostPort.indexOf(']'))
    : hostPort.indexOf(':');
  const spelled = colon === -1 ? hostPort : hostPort.slice(0, colon);
  const host = spelled.toLowerCase();
  const port = colon === -1 || colon === hostPort.length - 1 ? '' : hostPort.slice(colon);
  if (scheme === 'file' && userinfo === '' && port === '' && host === 'localhost')
    return { judged: '', sent: '' };
  return { judged: host + port, sent: userinfo + (scheme === 'file' ? host : spelled) + port };
}

/**
 * Characters a URI may not hold as themselves (space, `\`, non-ASCII, …), percent-encoded as
 * UTF-8; in a URI template (RFC 6570) the braces of its expressions stay.
 */
function encodeRaw(s: string, template: boolean): string {
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (code < 0x20 || code === 0x7f) throw new UriError('it contains a control character');
    if (ch === '%' || ALLOWED_RAW.test(ch) || (template && (ch === '{' || ch === '}'))) out += ch;
    else if (code >= 0xd800 && code <= 0xdfff) throw new UriError('it contains a lone surrogate');
    else out += encodeURIComponent(ch).toUpperCase();
  }
  return out;
}

/** Unreserved characters decoded, every other escape in upper-case hex. */
function percent(s: string): string {
  return s.replace(/%(.{0,2})/g, (_, hex: string) => {
    if (!HEX.test(hex)) throw new UriError('it has malformed percent-encoding');
    const ch = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

/**
 * An encoded `/` or `\` is data to the URI but a separator to a backend that decodes the path
 * before resolving it: `..%2Fsecret` would climb there and not here. Refused when it would.
 */
function hiddenDots(segment: string): void {
  if (!/%2F|%5C/.test(segment)) return;
  if (segment.split(/%2F|%5C/).some((p) => p === '.' || p === '..'))
    throw new UriError('an encoded / or \\ in its path hides a . or .. segment');
}

/** RFC 3986 §5.2.4. */
function removeDotSegments(path: string): string {
  const out: string[] = [];
  const segments = path.split('/');
  // A path ending in a dot segment names a directory: it keeps its trailing slash.
  const last = segments[segments.length - 1];
  const trailing = last === '.' || last === '..';
  for (const s of segments.slice(1)) {
    if (s === '.') continue;
    if (s === '..') out.pop();
    else out.push(s);
  }
  if (trailing) out.push('');
  return path.startsWith('/') ? `/${out.join('/')}` : out.join('/');
}
