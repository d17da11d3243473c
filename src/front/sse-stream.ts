// Writing to one SSE response without buffering for a reader that has stopped reading: past
// limits.maxUnreadBytes waiting, the stream is closed instead (the reader may open another).
import type { ServerResponse } from 'node:http';
import type { TextParts } from '../encoding/raw-text.js';
import { stringifyWire, wireBytes, type WireText } from '../jsonrpc/wire-write.js';
import type { Logger } from '../log.js';

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/** How much one SSE stream may leave unread, and who hears when a stream is closed for it. */
export interface StreamCap {
  maxUnreadBytes: number;
  /** The stream was closed with `unreadBytes` waiting; told once per stream. */
  overflowed(unreadBytes: number): void;
}

/** A cap whose overflow is logged with `about` (which session, caller or request the stream served). */
export function streamCap(maxUnreadBytes: number, log: Logger, about: Record<string, unknown>): StreamCap {
  return {
    maxUnreadBytes,
    overflowed: (unreadBytes) =>
      log.warn(
        { ...about, unreadBytes, maxUnreadBytes },
        'SSE stream closed: its reader left more unread than limits.maxUnreadBytes',
      ),
  };
}

/**
 * An SSE event or comment as written: one string, or parts when a message in it carries large
 * strings as the bytes they arrived in (those are written and kept as bytes, never decoded), or
 * its encoded bytes.
 */
export type SseChunk = WireText | Buffer;

/** UTF-8 bytes of a chunk. */
export function chunkBytes(chunk: SseChunk): number {
  return Buffer.isBuffer(chunk) ? chunk.length : wireBytes(chunk);
}

/**
 * Writes `chunk` (an SSE event or comment) to `res`, unless the reader has left so much unread that
 * it would exceed the cap: then the response is destroyed (its buffers freed at once, the client
 * sees the stream end) and false returned. A chunk always goes when nothing waits, so one large
 * message still reaches a reader that keeps up. Also false once the response has ended. `held`:
 * bytes of `res` kept back by its writer (never sent, so never the reader's to read yet).
 */
export function writeChunk(res: ServerResponse, chunk: SseChunk, cap: StreamCap, held = 0): boolean {
  if (res.destroyed || res.writableEnded) return false;
  // The response's own buffer and its socket's (node:http counts both).
  const unread = res.writableLength - held;
  if (unread > 0 && unread + chunkBytes(chunk) > cap.maxUnreadBytes) {
    res.destroy();
    cap.overflowed(unread);
    return false;
  }
  if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) res.write(chunk);
  else {
    // The parts leave in one write (or with the caller's, if it corked the response already).
    res.cork();
    for (const part of chunk.parts) res.write(part);
    res.uncork();
  }
  return true;
}

/**
 * One SSE `message` event carrying a JSON-RPC message. JSON text holds no line break (a string's
 * are escaped, large strings' bytes included), so the message is one `data` line.
 */
export function messageEvent(message: unknown): WireText {
  return textEvent(stringifyWire(message));
}

/** The `message` event of a message serialised already. */
export function textEvent(text: WireText): WireText {
  return around('event: message\ndata: ', text, '\n\n');
}

/** `event` with an id, so a host that loses the connection after it can resume from it. */
export function idEvent(id: string, event: WireText): WireText {
  return around(`id: ${id}\n`, event, '');
}

/** `text` between `head` and `tail`, keeping its parts as they are. */
function around(head: string, text: WireText, tail: string): WireText {
  if (typeof text === 'string') return `${head}${text}${tail}`;
  const parts: TextParts['parts'] = [head, ...text.parts, tail];
  return { parts, bytes: Buffer.byteLength(head) + text.bytes + Buffer.byteLength(tail) };
}

/**
 * The event a resumable stream opens with: an id and no data (hosts deliver nothing), so the host
 * can resume even before the first message, and how long to wait before coming back.
 */
export function primingEvent(id: string, retryMs: number): string {
  return `id: ${id}\nretry: ${retryMs}\ndata:\n\n`;
}
