// One POSTed request's answer on the HTTP front: plain JSON, unless something related to it must
// go out first, and then an SSE stream that the final message ends.
import type { ServerResponse } from 'node:http';
import type { JsonRpcMessage, RequestId } from '../jsonrpc/message.js';

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/** One POSTed request waiting for its answer. */
export class Exchange {
  private streaming = false;
  done = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly id: RequestId,
    private readonly headers: Record<string, string>,
  ) {}

  /** `status` applies when the final message is the whole answer (no stream was opened). */
  send(message: JsonRpcMessage, status = 200): boolean {
    if (this.done) return false;
    const final = 'id' in message && message.id === this.id && ('result' in message || 'error' in message);
    const body = JSON.stringify(message);
    if (final && !this.streaming) {
      this.done = true;
      this.res.writeHead(status, { ...this.headers, 'content-type': 'application/json' }).end(body);
      return true;
    }
    if (!this.streaming) {
      this.streaming = true;
      this.res.writeHead(200, { ...this.headers, ...SSE_HEADERS });
    }
    this.res.write(`event: message\ndata: ${body}\n\n`);
    if (final) this.end();
    return true;
  }

  /** Writes an SSE comment now and then while the stream is open and quiet. */
  keepAlive(ms: number): void {
    const timer = setInterval(() => {
      if (this.done) return clearInterval(timer);
      if (this.streaming) this.res.write(':\n\n');
    }, ms);
    timer.unref();
    this.res.once('close', () => clearInterval(timer));
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    if (!this.streaming && !this.res.headersSent)
      this.res.writeHead(200, { ...this.headers, ...SSE_HEADERS });
    this.res.end();
  }
}
