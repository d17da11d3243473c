// Small HTTP helpers of the admin listener: JSON answers and a bounded JSON body.
import type { IncomingMessage, ServerResponse } from 'node:http';

const BODY_MAX = 1024 * 1024;

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** A body that cannot be taken: 413 when too large, else 400. */
export class BodyError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 413 = 400,
  ) {
    super(message);
  }
}

/**
 * Answers a BodyError. One too large was not read to its end: the connection closes with the
 * answer, or the rest of the body would be read as the client's next request.
 */
export function refuseBody(res: ServerResponse, err: BodyError): void {
  const tooLarge = err.status === 413;
  sendJson(
    res,
    err.status,
    { error: tooLarge ? 'too_large' : 'bad_request', message: err.message },
    tooLarge ? { connection: 'close' } : {},
  );
}

/** The request's JSON body (an empty body is `{}`); BodyError when too large or not JSON. */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const tooLarge = () => new BodyError(`the body is over ${BODY_MAX} bytes`, 413);
  if (Number(req.headers['content-length'] ?? 0) > BODY_MAX) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_MAX) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new BodyError(`the body is not JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new BodyError('the body must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** A path segment decoded, or undefined when its percent-encoding is not valid UTF-8. */
export function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
