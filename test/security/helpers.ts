// Shared by the attack tests: a bridge client written against the socket directly, so a test can
// send what a well-behaved client never would and see every line switchboard sends back.
import { createConnection, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';

export type Json = Record<string, unknown>;

/** A token for a bridge identity switchboard does not spawn (a remote backend's). */
export const newToken = (): string => randomBytes(24).toString('base64url');

/** An entry that exists for its bridge identity: nothing listens at its URL. */
export function remoteCaller(token: string, allow: string[] = []) {
  return { url: 'http://127.0.0.1:1/mcp', bridge: { token, allow } };
}

export class RawBridge {
  /** Every message received, requests from switchboard included. */
  readonly received: Json[] = [];
  private buffer = '';
  private waiters: (() => void)[] = [];
  private nextId = 1;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString();
      for (let nl = this.buffer.indexOf('\n'); nl !== -1; nl = this.buffer.indexOf('\n')) {
        this.received.push(JSON.parse(this.buffer.slice(0, nl)) as Json);
        this.buffer = this.buffer.slice(nl + 1);
      }
      for (const w of this.waiters.splice(0)) w();
    });
    socket.on('error', () => {});
  }

  /** Connects to the socket and authenticates with the token. */
  static async as(path: string, token: string): Promise<RawBridge> {
    const socket = createConnection({ path });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const raw = new RawBridge(socket);
    const answer = await raw.request('bridge/authenticate', { token });
    assert.equal(answer.error, undefined, JSON.stringify(answer));
    return raw;
  }

  async request(method: string, params?: Json): Promise<Json> {
    const id = this.nextId++;
    this.socket.write(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params && { params }) }) + '\n');
    return this.next((l) => l.id === id && ('result' in l || 'error' in l), `an answer to ${id}`);
  }

  /** The first message received (already or still to come) that `match` takes. */
  async next(match: (message: Json) => boolean, what = 'the message awaited'): Promise<Json> {
    for (;;) {
      const found = this.received.find(match);
      if (found) return found;
      if (this.socket.destroyed) throw new Error(`closed before ${what} came`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Writes one message as it is, expecting no answer (a notification). */
  send(message: Json): void {
    this.socket.write(JSON.stringify(message) + '\n');
  }

  close(): void {
    this.socket.destroy();
  }
}
