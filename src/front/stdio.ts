// The stdio front: one host session over this process's stdin and stdout (stdout carries only
// JSON-RPC). Lines that are not JSON or are too large get an error; the session goes on.
import type { Readable, Writable } from 'node:stream';
import type { Gateway } from '../gateway/gateway.js';
import { readJsonLines } from '../jsonrpc/json-lines.js';
import { LineWriter } from '../jsonrpc/ndjson.js';
import type { LegacySession } from '../sessions/legacy-session.js';
import { openLineConnection } from './line-connection.js';

export interface StdioFrontOptions {
  input?: Readable;
  output?: Writable;
  maxMessageBytes: number;
}

export function serveStdio(
  gateway: Gateway,
  options: StdioFrontOptions,
): { session: LegacySession; closed: Promise<void> } {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const writer = new LineWriter(output);
  const write = (m: unknown) => writer.write(m);
  const connection = openLineConnection(gateway, { kind: 'host', id: 'stdio' }, write, 'stdio');
  readJsonLines(input, options.maxMessageBytes, {
    message: (value) => {
      connection.receive(value);
    },
    notJson: write,
    oversized: write,
  });
  const closed = new Promise<void>((resolve) => {
    input.once('end', resolve);
    input.once('close', resolve);
  }).then(() => connection.close('the host closed stdin'));
  return { session: connection.session, closed };
}
