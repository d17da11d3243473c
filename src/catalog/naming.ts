// Exposed names are a pure function of configuration: prefix (or not), separator, and a
// deterministic short form that keeps every name within MCP's 64-character limit.
import { createHash } from 'node:crypto';
import { uriPrefix } from '../config/prefixes.js';
import type { Config, BackendConfig, NamespacingMode } from '../config/schema.js';

export const MAX_NAME_LENGTH = 64;

export interface Namespace {
  /** The backend's configured name. */
  readonly backend: string;
  /** Whether this backend's names and URIs carry its prefix. */
  readonly prefixed: boolean;
  readonly prefix: string;
  readonly separator: string;
  /** Scheme-safe form of the prefix used on resource URIs. */
  readonly uriPrefix: string;
  /** A URI scheme the owner has to itself (an in-process source's `context`): such URIs are not prefixed. */
  readonly scheme?: string;
}

function modeOf(config: Config, b: BackendConfig): NamespacingMode {
  return b.namespacing ?? config.namespacing.mode;
}

/** One namespace per enabled backend. `conditional` counts the enabled backends in config. */
/** How `config`'s servers name the catalog's items: their namespaces, collision rule and priorities. */
export function catalogSettingsOf(config: Config): {
  namespaces: Map<string, Namespace>;
  collisions: Config['namespacing']['collisions'];
  priorities: Map<string, number>;
} {
  return {
    namespaces: namespacesOf(config),
    collisions: config.namespacing.collisions,
    priorities: new Map(Object.entries(config.servers).map(([n, b]) => [n, b.priority])),
  };
}

export function namespacesOf(config: Config): Map<string, Namespace> {
  const enabled = Object.entries(config.servers).filter(([, b]) => !b.disabled);
  const out = new Map<string, Namespace>();
  for (const [name, b] of enabled) {
    const mode = modeOf(config, b);
    const prefix = b.prefix ?? name;
    out.set(name, {
      backend: name,
      prefixed: mode === 'always' || (mode === 'conditional' && enabled.length > 1),
      prefix,
      separator: config.namespacing.separator,
      uriPrefix: uriPrefix(name, b),
    });
  }
  return out;
}

/**
 * The name a host sees for a backend's tool or prompt. When it is too long, the prefix gives way
 * first: a model picks tools by their own names, so cutting those would leave a long-prefixed
 * backend's tools told apart by hashes alone.
 */
export function exposedName(ns: Namespace, name: string): string {
  if (!ns.prefixed) return shorten(name);
  const full = `${ns.prefix}${ns.separator}${name}`;
  if (full.length <= MAX_NAME_LENGTH) return full;
  const tail = `_${hashOf(full)}${ns.separator}${name}`;
  return tail.length < MAX_NAME_LENGTH
    ? ns.prefix.slice(0, MAX_NAME_LENGTH - tail.length) + tail
    : shorten(full);
}

/** Names over the limit keep a readable head and end in a hash of the whole name. */
export function shorten(name: string): string {
  if (name.length <= MAX_NAME_LENGTH) return name;
  const hash = hashOf(name);
  return `${name.slice(0, MAX_NAME_LENGTH - hash.length - 1)}_${hash}`;
}

function hashOf(name: string): string {
  return createHash('sha256').update(name).digest('hex').slice(0, 8);
}

/** `memory+file:///x`: reversible, and URI templates stay templates. */
export function exposedUri(ns: Namespace, uri: string): string {
  if (ns.scheme !== undefined && uri.startsWith(`${ns.scheme}:`)) return uri;
  return ns.prefixed ? `${ns.uriPrefix}+${uri}` : uri;
}

/** Splits a namespaced URI into the owning prefix and the backend's own URI, if it has one. */
export function splitUri(uri: string): { uriPrefix: string; uri: string } | undefined {
  const m = /^([a-z0-9][a-z0-9.-]*)\+(.+)$/.exec(uri);
  return m ? { uriPrefix: m[1]!, uri: m[2]! } : undefined;
}
