// What of a backend's listed page the catalog takes: items that name themselves with a string,
// and, from a modern HTTP backend, tools whose header annotations keep the transport's rules.
import type { Upstream } from '../backends/upstream.js';
import type { Item } from '../catalog/catalog.js';
import type { Logger } from '../log.js';
import { invalidHeaderAnnotation } from '../protocol/http-headers.js';

/**
 * The items of a listed page that name themselves with a string (`name`, `uri` or `uriTemplate`);
 * the rest are left out, one warning per page. Everything downstream (naming, routing, pinning)
 * reads that field as text, and a value that is not one (`{"toString": 1}`) cannot even be
 * printed.
 */
export function wellFormed(got: unknown[], field: string, backend: Upstream, log: Logger): Item[] {
  const items = got.filter(
    (item): item is Item =>
      typeof item === 'object' &&
      item !== null &&
      !Array.isArray(item) &&
      typeof (item as Item)[field] === 'string' &&
      (item as Item)[field] !== '',
  );
  if (items.length < got.length)
    log.warn(
      { backend: backend.name, field, left: got.length - items.length },
      `list items without a string ${field} were left out`,
    );
  return items;
}

/** Tools a warning about left-out tools names; the rest are counted. */
const NAMED = 10;

/**
 * A modern HTTP backend's tools whose x-mcp-header annotations break the rules are left out, as
 * the 2026-07-28 transport requires of an HTTP client, in one warning per read (the first few
 * named, with why): the rest still serve.
 */
export function dropInvalidHeaders(items: Record<string, unknown>[], backend: Upstream, log: Logger): void {
  const left: { tool: unknown; reason: string }[] = [];
  let kept = 0;
  for (const item of items) {
    const why = invalidHeaderAnnotation(item.inputSchema);
    if (why) left.push({ tool: item.name, reason: why });
    else items[kept++] = item;
  }
  if (left.length === 0) return;
  items.length = kept;
  log.warn(
    { backend: backend.name, left: left.length, tools: left.slice(0, NAMED) },
    `${left.length === 1 ? 'a tool' : `${left.length} tools`} left out: invalid x-mcp-header`,
  );
}
