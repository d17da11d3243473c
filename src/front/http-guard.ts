// Host and Origin checks against DNS rebinding: a web page on another origin must not reach a
// server bound to localhost through a name that resolves there.
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export interface GuardOptions {
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
  /** Origins whose pages may use the endpoint from a browser: accepted here too. */
  corsOrigins?: readonly string[] | undefined;
}

function hostnameOf(hostHeader: string): string {
  if (hostHeader.startsWith('[')) return hostHeader.slice(0, hostHeader.indexOf(']') + 1);
  const colon = hostHeader.lastIndexOf(':');
  return colon === -1 ? hostHeader : hostHeader.slice(0, colon);
}

/** Returns why the request is refused, or undefined when it may pass. */
export function checkHostAndOrigin(
  host: string | undefined,
  origin: string | undefined,
  options: GuardOptions,
): string | undefined {
  if (!host) return 'Missing Host header';
  const hostname = hostnameOf(host.toLowerCase());
  if (
    !LOOPBACK.has(hostname) &&
    !options.allowedHosts.includes(host) &&
    !options.allowedHosts.includes(hostname)
  ) {
    return `Host ${host} is not allowed`;
  }
  if (origin === undefined) return undefined;
  if (options.allowedOrigins.includes(origin) || options.corsOrigins?.includes(origin)) return undefined;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `Origin ${origin} is not allowed`;
  }
  if ((url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK.has(url.hostname)) return undefined;
  return `Origin ${origin} is not allowed`;
}
