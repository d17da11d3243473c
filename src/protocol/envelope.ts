// The modern era's per-request envelope and the one decision of which era a message speaks. Every
// front asks `eraOf`; the pipeline's protocol stage asks `modernProblem`, in the order the
// 2026-07-28 conformance suite checks a request: the envelope, the version header agreeing with
// it, the version being served, the routing headers, and last the method existing in the era.
import type { IncomingHttpHeaders } from 'node:http';
import { LocalError, WIRE, WireError } from '../errors/errors.js';
import type { Params } from '../jsonrpc/message.js';
import { META, SUPPORTED_VERSIONS, isModernVersion } from './versions.js';
import { routingMismatch } from './http-headers.js';
import { removedInModern } from './methods.js';

export type Era = 'legacy' | 'modern';

interface Message {
  method?: unknown;
  params?: Params | undefined;
}

/**
 * The era a message speaks: modern when it names a protocol version in its `_meta` or comes with
 * a modern `MCP-Protocol-Version` header (HTTP); legacy otherwise (a session's message). The
 * method does not decide: an `initialize` in the modern envelope is a modern request for a
 * removed method.
 */
export function eraOf(message: Message, headerVersion?: unknown): Era {
  if (typeof headerVersion === 'string' && isModernVersion(headerVersion)) return 'modern';
  return message.params?._meta?.[META.protocolVersion] !== undefined ? 'modern' : 'legacy';
}

/** What a modern request's envelope lacks, if anything (the 2026-07-28 required `_meta` fields). */
export function envelopeProblem(params: Params | undefined): string | undefined {
  const meta = params?._meta;
  if (typeof meta !== 'object' || meta === null) return 'params._meta is required';
  const version = meta[META.protocolVersion];
  if (version === undefined) return `_meta["${META.protocolVersion}"] is required`;
  if (typeof version !== 'string')
    return `_meta["${META.protocolVersion}"] must be a string (a version such as 2026-07-28)`;
  const caps = meta[META.clientCapabilities];
  if (typeof caps !== 'object' || caps === null || Array.isArray(caps))
    return `_meta["${META.clientCapabilities}"] is required (an object; {} declares none)`;
  return undefined;
}

/** What a modern request came with besides its body: the HTTP headers, when HTTP carried it. */
export interface ModernWire {
  headers?: IncomingHttpHeaders | undefined;
  /** A tool's input schema by exposed name, for its `Mcp-Param-*` headers. */
  toolSchema?: ((name: string) => unknown) | undefined;
}

/** The error a modern request must get before anything serves it, if any. */
export function modernProblem(
  method: string,
  params: Params | undefined,
  wire: ModernWire = {},
): Error | undefined {
  const problem = envelopeProblem(params);
  // Invalid params on the wire, a bad request over HTTP (the catalogue's invalid_envelope).
  if (problem) return new LocalError('invalid_envelope', `Invalid request envelope: ${problem}`);
  const version = params?._meta?.[META.protocolVersion];
  const headers = wire.headers;
  if (headers) {
    const header = headers['mcp-protocol-version'];
    if (header !== version) {
      const said = header === undefined ? 'missing' : `'${String(header)}'`;
      return new WireError(
        WIRE.HEADER_MISMATCH,
        `Header mismatch: MCP-Protocol-Version header ${said} does not match body value '${String(version)}'`,
      );
    }
  }
  if (!isModernVersion(version)) {
    return new WireError(WIRE.UNSUPPORTED_PROTOCOL_VERSION, 'Unsupported protocol version', {
      supported: SUPPORTED_VERSIONS,
      requested: version,
    });
  }
  if (headers) {
    const name = params?.name;
    const schema = method === 'tools/call' && typeof name === 'string' ? wire.toolSchema?.(name) : undefined;
    const mismatch = routingMismatch(headers, { jsonrpc: '2.0', id: 0, method, params }, schema);
    if (mismatch) return new WireError(WIRE.HEADER_MISMATCH, `Header mismatch: ${mismatch}`);
  }
  if (removedInModern(method)) return new WireError(WIRE.METHOD_NOT_FOUND, `Method not found: ${method}`);
  return undefined;
}
