// Outbound HTTP connections switchboard makes (to HTTP backends and A2A agents, and to A2A push
// webhooks): a fetch over node:http(s) whose connections refuse private, link-local, loopback and
// other non-public addresses, judged on the address each connection is actually made to (the
// resolved one), so a name that resolves elsewhere later cannot bypass it. Redirects are never followed.
import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, isIPv4, type Socket } from 'node:net';
import { Readable } from 'node:stream';

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** A request body in pieces, written one after another (large strings as the bytes they came in). */
export interface BodyParts {
  readonly parts: readonly Uint8Array[];
  readonly bytes: number;
}

/** A fetch whose body may also come in pieces. */
export type OutboundFetch = (url: string | URL, init?: OutboundInit) => Promise<Response>;
export type OutboundInit = Omit<RequestInit, 'body'> & { body?: RequestInit['body'] | BodyParts };

/** dns.lookup's shape: what a connection calls to turn a host name into addresses. */
export type LookupFunction = (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

const V4_RANGES: [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private (RFC 1918)'],
  ['100.64.0.0', 10, 'shared carrier-grade NAT (RFC 6598)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (where cloud metadata services live)'],
  ['172.16.0.0', 12, 'private (RFC 1918)'],
  ['192.0.0.0', 24, 'reserved for protocol assignments'],
  ['192.168.0.0', 16, 'private (RFC 1918)'],
  ['198.18.0.0', 15, 'reserved for benchmarking'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const V6_RANGES: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  // Deprecated IPv4-compatible addresses (::a.b.c.d): some stacks still reach the IPv4 address.
  ['::', 96, 'IPv4-compatible (deprecated)'],
  ['64:ff9b:1::', 48, 'local-use NAT64 (RFC 8215)'],
  ['100::', 64, 'discard-only (RFC 6666)'],
  ['fc00::', 7, 'unique local (private)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

function v4Bits(address: string): bigint {
  return address.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

/** The 128 bits of an IPv6 address (with `::` and a trailing dotted quad expanded). */
function v6Bits(address: string): bigint {
  let text = address.toLowerCase().split('%', 1)[0]!;
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const v4 = v4Bits(quad[1]!);
    text = text.slice(0, -quad[1]!.length) + `${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}

function within(bits: bigint, width: number, base: bigint, prefix: number): boolean {
  const shift = BigInt(width - prefix);
  return bits >> shift === base >> shift;
}

/** Prefixes whose addresses carry an IPv4 address: at which bit it starts, counted from the right. */
const V4_CARRIERS: [string, number, bigint][] = [
  ['::ffff:0:0', 96, 0n], // IPv4-mapped
  ['::ffff:0:0:0', 96, 0n], // IPv4-translated (SIIT)
  ['64:ff9b::', 96, 0n], // well-known NAT64
  ['2002::', 16, 80n], // 6to4: 2002:AABB:CCDD::/48 reaches AA.BB.CC.DD
];

/**
 * Why `address` is not a public unicast address (e.g. `loopback`), or undefined when it is one.
 * IPv6 addresses that carry an IPv4 one (IPv4-mapped or -translated, NAT64 64:ff9b::/96, 6to4
 * 2002::/16) are judged by the IPv4 address they reach.
 */
export function nonPublicReason(address: string): string | undefined {
  if (isIPv4(address)) {
    const bits = v4Bits(address);
    return V4_RANGES.find(([base, prefix]) => within(bits, 32, v4Bits(base), prefix))?.[2];
  }
  if (isIP(address.split('%', 1)[0]!) !== 6) return undefined;
  const bits = v6Bits(address);
  const carrier = V4_CARRIERS.find(([base, prefix]) => within(bits, 128, v6Bits(base), prefix));
  if (carrier) {
    const v4 = (bits >> carrier[2]) & 0xffffffffn;
    return nonPublicReason([24n, 16n, 8n, 0n].map((s) => String((v4 >> s) & 0xffn)).join('.'));
  }
  return V6_RANGES.find(([base, prefix]) => within(bits, 128, v6Bits(base), prefix))?.[2];
}

/** What outbound connections are for (`backend "remote"`), and how an operator lets one through. */
export interface Destination {
  label: string;
  wayOut: string;
}

export const backendDestination = (name: string): Destination => ({
  label: `backend "${name}"`,
  wayOut: `Write the address itself in the URL, or set servers.${name}.allowPrivateNetwork: true, if this backend is meant to be on that network`,
});

/** A connection switchboard refused to make; its message names the host, the address and the way out. */
export class PrivateAddressError extends Error {
  readonly code = 'ERR_PRIVATE_ADDRESS';
  constructor(
    readonly destination: Destination,
    readonly hostname: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(
      `refused to connect ${destination.label} to ${hostname}` +
        (hostname === address ? '' : ` (it resolves to ${address})`) +
        `: ${address} is ${reason.startsWith('unspecified') ? 'an' : 'a'} ${reason} address. ${destination.wayOut}`,
    );
    this.name = 'PrivateAddressError';
  }
}

export interface OutboundOptions {
  /** What the connections are for, for error messages. */
  destination: Destination;
  /** The URL as configured: a literal IP or `localhost` there is the operator's explicit choice. */
  url: URL;
  /** Connect anywhere (servers.<name>.allowPrivateNetwork). */
  allowPrivateNetwork: boolean;
  /** Resolves host names (default dns.lookup); tests inject one that answers what they need. */
  lookup?: LookupFunction | undefined;
  /** The most connections open at once per scheme (default: no limit); more requests wait their turn. */
  maxSockets?: number | undefined;
}

/** A URL's host name without the brackets of an IPv6 address. */
export function bare(hostname: string): string {
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

/**
 * Whether a URL names its host outright: a literal address, or localhost. There is no name that
 * could be re-pointed, so a connection there is the operator's explicit choice.
 */
export function namedOutright(url: URL): boolean {
  const host = bare(url.hostname).toLowerCase();
  return isIP(host) !== 0 || host === 'localhost';
}

/** The lookup a connection uses: resolves every address, and refuses all if any is non-public. */
export function checkedLookup(destination: Destination, resolve: LookupFunction = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, result) => {
      if (err) return callback(err, []);
      const addresses = result as LookupAddress[];
      for (const a of addresses) {
        const reason = nonPublicReason(a.address);
        if (reason) return callback(new PrivateAddressError(destination, hostname, a.address, reason), []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

/** A request to an outbound destination answered as node:http answers it: headers, then a body stream. */
export type OutboundRequest = (url: string | URL, init?: OutboundInit) => Promise<IncomingMessage>;

/**
 * A fetch for one destination (an HTTP backend, say). Redirects are never followed here (the answer is returned as
 * `redirect: 'manual'` would): a caller that follows same-origin ones sends each through here
 * again. Each new connection resolves its host through `checkedLookup`; a kept-alive connection
 * was checked when it was made. `request` is the same without the fetch API around the answer,
 * for a client that reads the bytes itself.
 */
export function outboundFetch(
  options: OutboundOptions,
): OutboundFetch & { close(): void; request: OutboundRequest } {
  const configured = bare(options.url.hostname).toLowerCase();
  // Nothing to guard against for a host the operator named outright.
  const explicit = namedOutright(options.url);
  const lookup = checkedLookup(options.destination, options.lookup);
  const agentOptions = {
    keepAlive: true,
    ...(options.maxSockets ? { maxSockets: options.maxSockets } : {}),
    onread: READ_INTO,
  };
  const agents = { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) };

  const request: OutboundRequest = async (input, init) => {
    const url = new URL(input instanceof URL ? input.href : input);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new TypeError(`unsupported protocol ${url.protocol}`);
    const host = bare(url.hostname).toLowerCase();
    const guarded = !options.allowPrivateNetwork && !(explicit && host === configured);
    if (guarded && isIP(host) !== 0) {
      // Connections to a literal address never call lookup: judge the address itself.
      const reason = nonPublicReason(host);
      if (reason) throw new PrivateAddressError(options.destination, host, host, reason);
    }
    return send(
      url,
      init,
      guarded ? lookup : options.lookup,
      url.protocol === 'https:' ? agents.https : agents.http,
    );
  };
  const fetch: OutboundFetch = async (input, init) =>
    asResponse(await request(input, init), (init?.method ?? 'GET').toUpperCase());
  // Kept-alive connections end with the channel rather than idling until the server drops them.
  const close = () => {
    agents.http.destroy();
    agents.https.destroy();
  };
  return Object.assign(fetch, { close, request });
}

/**
 * Where every outbound connection reads: one buffer, reused. node:http's parser copies a body's
 * bytes out of each read (and headers into strings) before the read returns, so a read buffer of
 * the socket's own would be garbage at once, yet outside V8's heap until a collection: an answer's
 * bytes held twice, the copy (what an answer's large strings keep, wire-parse.ts) and the read.
 * Read here instead, only the copy is made. Reads are handed on as the socket's `data` (what the
 * client listens for) and used before the next read can land, whichever socket it is on. Nothing
 * may keep a read past its turn: no upgrade or CONNECT (whose `head` is one) goes through these agents.
 */
const READ_INTO = {
  buffer: Buffer.allocUnsafe(64 * 1024),
  callback(this: Socket, bytes: number, buffer: Uint8Array): boolean {
    this.emit('data', Buffer.from(buffer.buffer, buffer.byteOffset, bytes));
    return true;
  },
};

/** An answer as the fetch API's Response (its body a web stream over the node one). */
function asResponse(res: IncomingMessage, method: string): Response {
  const out = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
    out.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  const status = res.statusCode ?? 502;
  const empty = method === 'HEAD' || status === 204 || status === 205 || status === 304;
  if (empty) res.resume();
  return new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
    status,
    statusText: res.statusMessage ?? '',
    headers: out,
  });
}

function bodyOf(body: OutboundInit['body']): string | Uint8Array | BodyParts | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (isParts(body)) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body instanceof URLSearchParams) return body.toString();
  throw new TypeError('unsupported request body type for an outbound request');
}

function send(
  url: URL,
  init: OutboundInit | undefined,
  lookup: LookupFunction | undefined,
  agent: HttpAgent,
): Promise<IncomingMessage> {
  const method = (init?.method ?? 'GET').toUpperCase();
  const headers = headerRecord(init?.headers);
  const body = bodyOf(init?.body);
  // In pieces, the length is known up front: sent as a length, not chunked.
  if (isParts(body)) headers['content-length'] = String(body.bytes);
  const signal = init?.signal ?? undefined;
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(
      url,
      { method, headers, agent, ...(lookup ? { lookup } : {}), ...(signal ? { signal } : {}) },
      resolve,
    );
    req.once('error', (err) => {
      // A parse error carries the read it failed in: a view of READ_INTO, another read's bytes soon.
      delete (err as { rawPacket?: unknown }).rawPacket;
      reject(err);
    });
    if (isParts(body)) {
      for (const part of body.parts) req.write(part);
      req.end();
    } else req.end(body);
  });
}

/** Headers as node:http takes them, names in lower case (a plain record copied as it is). */
function headerRecord(given: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (given === undefined) return out;
  if (given instanceof Headers || Array.isArray(given))
    new Headers(given).forEach((value, key) => (out[key] = value));
  else for (const [key, value] of Object.entries(given)) out[key.toLowerCase()] = value;
  return out;
}

function isParts(body: unknown): body is BodyParts {
  return typeof body === 'object' && body !== null && Array.isArray((body as BodyParts).parts);
}
