// The stdio front: one host session over this process's stdin and stdout (stdout carries only
// JSON-RPC). Lines that are not JSON or are too large get an error; the session goes on.
import type { Readable, Writable } from 'node:stream';
import { LocalError } from '../errors.js';
import { isModernRequest } from '../eras/modern-host.js';
import type { JsonRpcRequest, Params, RequestId } from '../jsonrpc/message.js';
import { META } from '../protocol.js';
import type { Gateway } from '../gateway/gateway.js';
import { readJsonLines } from '../jsonrpc/json-lines.js';
import { LineWriter } from '../jsonrpc/ndjson.js';
import type { HostSession } from './session.js';

export interface StdioFrontOptions {
  input?: Readable;
  output?: Writable;
  maxMessageBytes: number;
}

export function serveStdio(
  gateway: Gateway,
  options: StdioFrontOptions,
): { session: HostSession; closed: Promise<void> } {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const writer = new LineWriter(output);
  const write = (m: unknown) => writer.write(m);
  const caller = { kind: 'host', id: 'stdio' } as const;
  const session = gateway.openSession({ send: (m) => write(m) }, caller, 'stdio');
  // Modern requests in flight, by id: what notifications/cancelled names.
  const modern = new Map<RequestId, AbortController>();
  const serveModern = async (req: JsonRpcRequest) => {
    const ac = new AbortController();
    modern.set(req.id, ac);
    try {
      const response = await gateway.modern.serve(req, caller, { notify: write, signal: ac.signal });
      if (response) write(response);
    } finally {
      if (modern.get(req.id) === ac) modern.delete(req.id);
    }
  };
  readJsonLines(input, options.maxMessageBytes, {
    message: (value) => {
      // Both eras on one stream: a request naming a modern version in its _meta is served on its
      // own; everything else belongs to the (legacy) session.
      const m = value as { id?: RequestId; method?: unknown; params?: Params } | null;
      if (typeof m?.method === 'string' && m.params?._meta?.[META.protocolVersion] !== undefined) {
        if (m.id !== undefined && isModernRequest(m as JsonRpcRequest))
          return void serveModern(m as JsonRpcRequest);
      }
      if (m?.method === 'notifications/cancelled') {
        const id = (m.params as { requestId?: RequestId } | undefined)?.requestId;
        const ac = id === undefined ? undefined : modern.get(id);
        if (ac) return void ac.abort(new LocalError('cancelled', 'cancelled by the host'));
      }
      void session.receive(value);
    },
    notJson: write,
    oversized: write,
  });
  const closed = new Promise<void>((resolve) => {
    input.once('end', resolve);
    input.once('close', resolve);
  }).then(() => {
    for (const ac of modern.values()) ac.abort(new LocalError('cancelled', 'the host closed stdin'));
    session.close();
  });
  return { session, closed };
}
