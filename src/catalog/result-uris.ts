// Rewrites the resource URIs inside results (links, embedded resources, read contents) into the
// namespaced form, so a host can read back anything a backend points it to.
import type { Result } from '../jsonrpc/message.js';
import type { Catalog } from './catalog.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null;
}

function contentBlock(block: unknown, expose: (uri: string) => string): unknown {
  if (!isObj(block)) return block;
  if (block.type === 'resource_link' && typeof block.uri === 'string')
    return { ...block, uri: expose(block.uri) };
  if (block.type === 'resource' && isObj(block.resource) && typeof block.resource.uri === 'string') {
    return { ...block, resource: { ...block.resource, uri: expose(block.resource.uri) } };
  }
  return block;
}

export function exposeResultUris(catalog: Catalog, backend: string, method: string, result: Result): Result {
  if (!catalog.namespaces.get(backend)?.prefixed) return result;
  const expose = (uri: string) => catalog.exposeUri(backend, uri);
  switch (method) {
    case 'tools/call':
      return Array.isArray(result.content)
        ? { ...result, content: result.content.map((b) => contentBlock(b, expose)) }
        : result;
    case 'prompts/get':
      return Array.isArray(result.messages)
        ? {
            ...result,
            messages: result.messages.map((m: unknown) =>
              isObj(m) ? { ...m, content: contentBlock(m.content, expose) } : m,
            ),
          }
        : result;
    case 'resources/read':
      return Array.isArray(result.contents)
        ? {
            ...result,
            contents: result.contents.map((c: unknown) =>
              isObj(c) && typeof c.uri === 'string' ? { ...c, uri: expose(c.uri) } : c,
            ),
          }
        : result;
    default:
      return result;
  }
}
