// The stdio front: one host session over this process's stdin and stdout (stdout carries only
// JSON-RPC). Lines that are not JSON or are too large get an error; the session goes on.
//
// A host that stops reading stdout cannot be cut off without ending switchboard with it, so it is
// slowed instead: while stdout is behind, stdin is not read (no new calls, so no new answers), and
// past limits.maxUnreadBytes notifications are dropped (logged once each time it falls behind).
// Answers and requests to the host still go out: what waits is bounded by the calls under way.
//
// The host closing stdin is the end of the session but not of its calls: `closed` tells the owner,
// whose stop drains them (shutdown.drainMs) while their answers still go out on stdout, and only
// then closes the session (`close`). Closing it at once would drop them with no answer at all.
import type { Readable, Writable } from 'node:stream';
import type { Gateway } from '../gateway/gateway.js';
import { BoundedWriter } from '../jsonrpc/bounded-writer.js';
import { readJsonLines, standInAnswer } from '../jsonrpc/json-lines.js';
import type { JsonRpcMessage } from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import type { LegacySession } from '../sessions/legacy-session.js';
import { openLineConnection } from './line-connection.js';

export interface StdioFrontOptions {
  input?: Readable;
  output?: Writable;
  maxMessageBytes: number;
  maxUnreadBytes: number;
  /** The catalog profile the host sees (`up --stdio --profile`); undefined: the default view. */
  profile?: string | undefined;
  log: Logger;
}

export interface StdioFront {
  readonly session: LegacySession;
  /** Resolves when the host closes stdin. */
  readonly closed: Promise<void>;
  /** Ends the session: its calls still under way are cancelled, and nothing more is sent. */
  close(why: string): void;
}

export function serveStdio(gateway: Gateway, options: StdioFrontOptions): StdioFront {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const { log } = options;
  let behind = false;
  const writer = new BoundedWriter(output, {
    ...options,
    oversized: (m, bytes, limit) =>
      log.warn(
        { id: 'id' in m ? m.id : undefined, bytes, limit },
        'stdio message over the message limit not sent',
      ),
    overflow: (m, unread) => {
      if (!('method' in m) || 'id' in m) return true;
      if (!behind) log.warn({ unreadBytes: unread }, 'the stdio host is not reading; dropping notifications');
      behind = true;
      return false;
    },
  });
  // A host that is gone altogether (stdout closed too) cannot be answered; a write to it must not
  // end switchboard with an unhandled EPIPE while its calls drain.
  let gone = false;
  output.on('error', (err: Error) => {
    if (!gone) log.warn({ err: err.message }, 'the stdio host stopped reading stdout; nothing more is sent');
    gone = true;
  });
  const write = (m: JsonRpcMessage): boolean => {
    if (gone) return false;
    const sent = writer.send(m);
    if (sent && 'method' in m && !('id' in m)) behind = false;
    if (writer.needsDrain && !input.isPaused()) {
      input.pause();
      output.once('drain', () => input.resume());
    }
    return sent;
  };
  const connection = openLineConnection(
    gateway,
    { kind: 'host', id: 'stdio' },
    write,
    'stdio',
    options.profile,
  );
  readJsonLines(input, options.maxMessageBytes, {
    message: (value) => {
      connection.receive(value);
    },
    notJson: write,
    oversized: (line) => {
      // An answer of the host's to one of ours fails that request; a request is answered by its
      // id (its caller can match that); a notification is dropped, as a JSON-RPC peer answers none.
      const answer = standInAnswer(line, 'the host', 'message_too_large', (id) =>
        connection.session.awaits(id),
      );
      if (answer) return connection.receive(answer);
      if (line.reply) return void write(line.reply);
      log.warn(
        { bytes: line.bytes, limit: line.limit },
        'stdio host notification over the message limit dropped',
      );
    },
  });
  const closed = new Promise<void>((resolve) => {
    input.once('end', resolve);
    input.once('close', resolve);
  });
  return { session: connection.session, closed, close: (why) => connection.close(why) };
}
