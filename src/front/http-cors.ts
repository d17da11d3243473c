// CORS for the MCP endpoint: a page on an origin the operator listed (`http.corsOrigins`) may
// talk to it from a browser. Its preflight is answered before authentication (a browser sends no
// credentials with one), and its answers say that origin may read them, session id included.
import type { IncomingMessage, ServerResponse } from 'node:http';

const METHODS = 'GET, POST, DELETE';
/** What an MCP client sends, for a preflight that names no headers or names them unreadably. */
const HEADERS =
  'accept, authorization, content-type, last-event-id, mcp-method, mcp-name, mcp-protocol-version, mcp-session-id, traceparent, tracestate';
/** What a browser client must read of an answer: its session, the version, how to authenticate. */
const EXPOSED = 'mcp-session-id, mcp-protocol-version, www-authenticate';
/** How long a browser may reuse a preflight's answer, in seconds. */
const MAX_AGE = '600';
/** A list of header names (RFC 9110 tokens), as Access-Control-Request-Headers carries it. */
const HEADER_LIST = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]*,[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;

/**
 * For a request from a listed origin: answers it if it is a preflight (true: nothing more to do),
 * else marks its answer as readable by that origin. Any other request is left as it is, but for
 * `Vary` once any origin is listed: an answer then depends on who asked.
 */
export function answerCors(req: IncomingMessage, res: ServerResponse, origins: readonly string[]): boolean {
  if (origins.length === 0) return false;
  res.setHeader('vary', 'Origin');
  const origin = req.headers.origin;
  if (origin === undefined || !origins.includes(origin)) return false;
  res.setHeader('access-control-allow-origin', origin);
  if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
    // The origin is trusted by the operator: the headers its client asks for are allowed, so a
    // tool's own Mcp-Param-* headers pass as the standard ones do.
    const asked = req.headers['access-control-request-headers']?.trim();
    res
      .writeHead(204, {
        'access-control-allow-methods': METHODS,
        'access-control-allow-headers': asked && HEADER_LIST.test(asked) ? asked : HEADERS,
        'access-control-max-age': MAX_AGE,
      })
      .end();
    return true;
  }
  res.setHeader('access-control-expose-headers', EXPOSED);
  return false;
}
