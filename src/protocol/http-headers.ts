// The modern era's HTTP request headers (2026-07-28, SEP-2243): MCP-Protocol-Version, Mcp-Method,
// Mcp-Name and the Mcp-Param-{Name} headers a tool's input schema asks for with `x-mcp-header`.
// Switchboard checks them against the body on its front (so nothing routed on a header can
// disagree with what is served) and writes them for the modern HTTP backends it calls.
import type { JsonRpcRequest, Params } from '../jsonrpc/message.js';
import { META } from './versions.js';
import { methodSpec, namedBy } from './methods.js';
import { RawText } from '../encoding/raw-text.js';

const SENTINEL = /^=\?base64\?(.*)\?=$/;
const SAFE = /^[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?$/;

/** A value as a header carries it: as is when plain visible ASCII, else the base64 sentinel form. */
export function encodeHeaderValue(value: string): string {
  if (SAFE.test(value) && !SENTINEL.test(value)) return value;
  return `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** The value a header stands for, or undefined when it is malformed. */
export function decodeHeaderValue(header: string): string | undefined {
  const m = SENTINEL.exec(header);
  if (!m) return SAFE.test(header) || header === '' ? header : undefined;
  const b64 = m[1]!;
  // Strict base64: whole 4-character groups, padding only at the end.
  if (b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return undefined;
  return Buffer.from(b64, 'base64').toString('utf8');
}

/** The body value Mcp-Name mirrors, for the methods that have one. */
export function nameSource(req: JsonRpcRequest): string | undefined {
  const spec = methodSpec(req.method);
  if (!spec?.header) return undefined;
  const v = namedBy(spec, req.params ?? {});
  return typeof v === 'string' ? v : undefined;
}

export interface HeaderParam {
  /** Header name without the Mcp-Param- prefix. */
  name: string;
  /** The chain of `properties` keys leading to the parameter. */
  path: string[];
}

/** The `x-mcp-header` annotations of a tool's input schema, reached through `properties` only. */
export function headerParams(schema: unknown): HeaderParam[] {
  const out: HeaderParam[] = [];
  const walk = (node: unknown, path: string[]) => {
    const props = (node as { properties?: unknown } | null)?.properties;
    if (typeof props !== 'object' || props === null) return;
    for (const [key, sub] of Object.entries(props as Record<string, unknown>)) {
      const header = (sub as { 'x-mcp-header'?: unknown } | null)?.['x-mcp-header'];
      if (typeof header === 'string' && header.length > 0) out.push({ name: header, path: [...path, key] });
      walk(sub, [...path, key]);
    }
  };
  walk(schema, []);
  return out;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Keywords whose subschemas are reached through `properties` keys only. */
const STATIC = 'properties';

/**
 * Why a tool's `x-mcp-header` annotations break the 2026-07-28 rules (undefined: they do not):
 * each must be a non-empty header token, unique regardless of case, on a string, integer or
 * boolean parameter reached from the root through `properties` keys only. An HTTP client must
 * leave such a tool out.
 */
export function invalidHeaderAnnotation(schema: unknown): string | undefined {
  const seen = new Set<string>();
  const visit = (node: unknown, reachable: boolean, depth: number): string | undefined => {
    if (typeof node !== 'object' || node === null || depth > 64) return undefined;
    if (Array.isArray(node)) {
      for (const item of node) {
        const why = visit(item, false, depth + 1);
        if (why) return why;
      }
      return undefined;
    }
    const n = node as Record<string, unknown>;
    if ('x-mcp-header' in n) {
      const h = n['x-mcp-header'];
      if (!reachable || depth === 0)
        return 'x-mcp-header on a parameter not reached through properties alone';
      if (typeof h !== 'string' || !TOKEN.test(h))
        return `x-mcp-header ${JSON.stringify(h)} is not a header name token`;
      if (seen.has(h.toLowerCase())) return `x-mcp-header ${h} is used twice`;
      seen.add(h.toLowerCase());
      if (!['string', 'integer', 'boolean'].includes(n.type as string))
        return `x-mcp-header ${h} is on a parameter of type ${JSON.stringify(n.type)} (string, integer or boolean only)`;
    }
    for (const [key, value] of Object.entries(n)) {
      if (key === STATIC && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        for (const sub of Object.values(value as Record<string, unknown>)) {
          const why = visit(sub, reachable, depth + 1);
          if (why) return why;
        }
      } else if (typeof value === 'object') {
        const why = visit(value, false, depth + 1);
        if (why) return why;
      }
    }
    return undefined;
  };
  return visit(schema, true, 0);
}

function valueAt(args: unknown, path: string[]): unknown {
  let v: unknown = args;
  for (const key of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  // An argument that came in as bytes (wire-parse.ts) is mirrored as the text it is.
  return v instanceof RawText ? v.text : v;
}

function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

/** The Mcp-Param-* headers a call of a tool with this schema carries. */
export function paramHeaders(schema: unknown, args: Params | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of headerParams(schema)) {
    const text = headerText(valueAt(args, p.path));
    if (text !== undefined) out[`mcp-param-${p.name.toLowerCase()}`] = encodeHeaderValue(text);
  }
  return out;
}

type Headers = Record<string, string | string[] | undefined>;

function one(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Why a modern request's headers disagree with its body (undefined: they agree). `schema` is the
 * called tool's input schema, for its Mcp-Param headers.
 */
export function routingMismatch(headers: Headers, req: JsonRpcRequest, schema?: unknown): string | undefined {
  const version = one(headers, 'mcp-protocol-version');
  const bodyVersion = req.params?._meta?.[META.protocolVersion];
  if (version === undefined) return 'the MCP-Protocol-Version header is required';
  if (version !== bodyVersion)
    return `MCP-Protocol-Version header value '${version}' does not match body value '${String(bodyVersion)}'`;
  const method = one(headers, 'mcp-method');
  if (method === undefined) return 'the Mcp-Method header is required';
  if (method !== req.method)
    return `Mcp-Method header value '${method}' does not match body value '${req.method}'`;
  if (methodSpec(req.method)?.header) {
    const raw = one(headers, 'mcp-name');
    if (raw === undefined) return 'the Mcp-Name header is required';
    const name = decodeHeaderValue(raw);
    if (name === undefined) return 'the Mcp-Name header is malformed';
    const body = nameSource(req);
    if (name !== body) return `Mcp-Name header value '${name}' does not match body value '${String(body)}'`;
  }
  if (req.method !== 'tools/call' || schema === undefined) return undefined;
  const args = req.params?.arguments as Params | undefined;
  for (const p of headerParams(schema)) {
    const header = `mcp-param-${p.name.toLowerCase()}`;
    const raw = one(headers, header);
    const value = valueAt(args, p.path);
    if (value === undefined || value === null) continue;
    if (raw === undefined) return `the Mcp-Param-${p.name} header is required: the argument is present`;
    const text = decodeHeaderValue(raw);
    if (text === undefined) return `the Mcp-Param-${p.name} header is malformed`;
    const same =
      typeof value === 'number' ? Number(text) === value && text.trim() !== '' : text === headerText(value);
    if (!same)
      return `Mcp-Param-${p.name} header value '${text}' does not match body value '${String(value)}'`;
  }
  return undefined;
}
