// The bridge as an MCP SDK Transport: `new Client(...).connect(createBridgeTransport())` works.
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { classify } from '../../jsonrpc/message.js';
import type { BridgeSession } from './authenticate.js';
import { BridgeConnection, type BridgeConnectOptions } from './connection.js';
import { BridgeError } from './errors.js';

/** `start()` connects and authenticates; then messages pass as they are, both ways. */
export class BridgeTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  private connection: BridgeConnection | undefined;
  private started = false;

  constructor(private readonly options: BridgeConnectOptions = {}) {}

  /** Known after start(). */
  get session(): BridgeSession | undefined {
    return this.connection?.session;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('BridgeTransport already started');
    this.started = true;
    const connection = await BridgeConnection.open(this.options);
    this.connection = connection;
    connection.listen({
      message: (value) => {
        const c = classify(value);
        if (c.kind === 'invalid') this.onerror?.(new BridgeError('protocol', `invalid message: ${c.reason}`));
        else this.onmessage?.(value as JSONRPCMessage);
      },
      error: (error) => this.onerror?.(error),
      close: () => this.onclose?.(),
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.connection) throw new BridgeError('closed', 'BridgeTransport is not started');
    await this.connection.send(message);
  }

  async close(): Promise<void> {
    if (this.connection) await this.connection.close();
    else this.onclose?.();
  }
}

export function createBridgeTransport(options?: BridgeConnectOptions): BridgeTransport {
  return new BridgeTransport(options);
}
