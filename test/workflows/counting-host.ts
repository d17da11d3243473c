// A host whose transport counts every JSON-RPC message and its bytes each way, for comparing what
// crosses the host connection when a job is one workflow call or several tool calls.
import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';

export interface Tally {
  sent: number;
  received: number;
  sentBytes: number;
  receivedBytes: number;
}

export interface CountingHost {
  client: Client;
  /** The tally so far; `reset()` starts a new one (after the handshake and the tool list). */
  tally(): Tally;
  reset(): void;
}

const bytes = (m: unknown): number => Buffer.byteLength(JSON.stringify(m));

/**
 * An SDK Client over Streamable HTTP whose transport is wrapped in a Proxy: the SDK's own transport
 * does the work, the Proxy sees each message the Client sends and each one it is handed.
 */
export async function countingHost(url: string, name: string): Promise<CountingHost> {
  let t: Tally = { sent: 0, received: 0, sentBytes: 0, receivedBytes: 0 };
  const inner = new StreamableHTTPClientTransport(new URL(url));
  const counted = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'send')
        return (message: unknown, options?: unknown) => {
          t.sent++;
          t.sentBytes += bytes(message);
          return target.send(message as Parameters<Transport['send']>[0], options as never);
        };
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
    set(target, prop, value: unknown) {
      if (prop === 'onmessage' && typeof value === 'function') {
        const deliver = value as (message: unknown, extra?: unknown) => void;
        target.onmessage = ((message: unknown, extra?: unknown) => {
          t.received++;
          t.receivedBytes += bytes(message);
          deliver(message, extra);
        }) as Transport['onmessage'];
        return true;
      }
      return Reflect.set(target, prop, value);
    },
  });
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  await client.connect(counted);
  return {
    client,
    tally: () => ({ ...t }),
    reset: () => {
      t = { sent: 0, received: 0, sentBytes: 0, receivedBytes: 0 };
    },
  };
}
