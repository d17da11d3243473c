// One POSTed request's answer on the HTTP front: plain JSON, unless something related to it must
// go out first, and then an SSE stream that the final message ends; or, for a legacy session's
// request, a resumable stream (resumable-stream.ts), which answers as plain JSON too when the
// answer comes first.
import type { ServerResponse } from 'node:http';
import type { JsonRpcMessage, RequestId } from '../jsonrpc/message.js';
import { stringifyWire } from '../jsonrpc/wire-write.js';
import { answerJson } from './json-answer.js';
import type { ResumableStream } from './resumable-stream.js';
import { messageEvent, SSE_HEADERS, writeChunk, type StreamCap } from './sse-stream.js';

export { SSE_HEADERS } from './sse-stream.js';

/** One POSTed request waiting for its answer. */
export class Exchange {
  private streaming = false;
  /** Closed for a reader that stopped reading (or gone): unanswered, and nothing more goes this way. */
  private cut = false;
  /** Answered (or ended without an answer). */
  done = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly id: RequestId,
    private readonly headers: Record<string, string>,
    /** Bounds what its SSE stream may leave unread; past it the stream is closed. */
    private readonly cap: StreamCap,
    /** Where the answer goes when it is resumable (a legacy session's request). */
    private readonly stream?: ResumableStream,
  ) {
    if (stream) {
      this.streaming = true;
      stream.attach(res, headers);
    }
  }

  /** `status` applies when the final message is the whole answer (no stream was opened). */
  send(message: JsonRpcMessage, status = 200): boolean {
    if (this.done || this.cut) return false;
    const final = 'id' in message && message.id === this.id && ('result' in message || 'error' in message);
    if (this.stream) {
      // Kept for a resume whether or not a connection is attached now; the answer ends the stream.
      this.stream.write(message, final);
      if (final) this.end();
      return true;
    }
    if (final && !this.streaming) {
      this.done = true;
      answerJson(this.res, stringifyWire(message), this.headers, status);
      return true;
    }
    if (!this.streaming) {
      this.streaming = true;
      this.res.writeHead(200, { ...this.headers, ...SSE_HEADERS });
    }
    // The answer and the end of the response in one write (res.end() uncorks).
    if (final) this.res.cork();
    if (!writeChunk(this.res, messageEvent(message), this.cap)) {
      this.cut = true;
      return false;
    }
    if (final) this.end();
    return true;
  }

  /** Writes an SSE comment now and then while the stream is open and quiet. */
  keepAlive(ms: number): void {
    const timer = setInterval(() => {
      if (this.done || this.cut) return clearInterval(timer);
      if (this.streaming && !writeChunk(this.res, ':\n\n', this.cap)) this.cut = true;
    }, ms);
    timer.unref();
    this.res.once('close', () => clearInterval(timer));
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    if (this.stream) return this.stream.end();
    if (!this.streaming && !this.res.headersSent)
      this.res.writeHead(200, { ...this.headers, ...SSE_HEADERS });
    this.res.end();
  }
}
