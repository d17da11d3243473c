// A channel whose implementation is loaded as it starts. The HTTP and A2A client libraries are
// megabytes of heap and a large part of startup; a switchboard with no such backend never loads
// them, and one that gains one by a reload loads them then.
import type { Channel } from '../jsonrpc/channel.js';

type Handlers = Pick<Channel, 'onmessage' | 'onclose' | 'onerror'>;

export class LoadedChannel implements Channel {
  private inner: Channel | undefined;
  /** The close under way or done: a second close waits for the first. */
  private closing: Promise<void> | undefined;
  private readonly handlers: Handlers = {};

  constructor(private readonly load: () => Promise<Channel>) {}

  async start(): Promise<void> {
    const inner = await this.load();
    // Closed while loading (a stop, a failed start): it never opens.
    if (this.closing) throw new Error('connection closed');
    this.inner = inner;
    Object.assign(inner, this.handlers);
    await inner.start();
  }

  send(...args: Parameters<Channel['send']>): Promise<void> {
    if (!this.inner) return Promise.reject(new Error('not connected'));
    return this.inner.send(...args);
  }

  close(): Promise<void> {
    this.closing ??= this.inner
      ? this.inner.close()
      : // Never opened: it ends as a closing transport does, by saying so.
        Promise.resolve().then(() => this.handlers.onclose?.());
    return this.closing;
  }

  get onmessage(): Channel['onmessage'] {
    return this.handlers.onmessage;
  }
  set onmessage(f: Channel['onmessage']) {
    this.handlers.onmessage = f;
    if (this.inner) this.inner.onmessage = f;
  }
  get onclose(): Channel['onclose'] {
    return this.handlers.onclose;
  }
  set onclose(f: Channel['onclose']) {
    this.handlers.onclose = f;
    if (this.inner) this.inner.onclose = f;
  }
  get onerror(): Channel['onerror'] {
    return this.handlers.onerror;
  }
  set onerror(f: Channel['onerror']) {
    this.handlers.onerror = f;
    if (this.inner) this.inner.onerror = f;
  }

  get closeReason(): string | undefined {
    return this.inner?.closeReason;
  }
  get sessionId(): string | undefined {
    return this.inner?.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner?.setProtocolVersion?.(version);
  }
}
