// One JSON-RPC message as a whole HTTP response: `application/json` with its length (not chunked:
// no framing around the body, no closing chunk), a large string that came in as bytes written as
// those bytes.
import type { ServerResponse } from 'node:http';
import type { WireText } from '../jsonrpc/wire-write.js';

/** Writes `body` (a serialised message) as the response's whole body with `status` and `headers`, and ends it. */
export function answerJson(
  res: ServerResponse,
  body: WireText,
  headers: Record<string, string>,
  status = 200,
): void {
  const json = { ...headers, 'content-type': 'application/json' };
  if (typeof body === 'string') {
    res.writeHead(status, { ...json, 'content-length': Buffer.byteLength(body) }).end(body);
    return;
  }
  res.writeHead(status, { ...json, 'content-length': body.bytes });
  res.cork();
  for (const part of body.parts) res.write(part);
  res.end();
}
