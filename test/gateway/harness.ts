// Gateway test harness: probe backends, raw HTTP and stdio wires to switchboard's fronts, and
// readers of what probe tools answer. Starting switchboard and SDK hosts live in test/support/.
import { PassThrough } from 'node:stream';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { startGateway } from '../support/start-switchboard.js';

export const PROBE = fileURLToPath(new URL('../fixtures/probe-server.js', import.meta.url));

/** A backend entry that runs the probe server under `name`. */
export function probe(name: string, options: { toolPrefix?: string; extra?: object } = {}) {
  const args = [PROBE, '--name', name];
  if (options.toolPrefix) args.push('--tool-prefix', options.toolPrefix);
  return { command: process.execPath, args, ...options.extra };
}

/** A raw NDJSON wire to switchboard's stdio front: write lines, read parsed messages. */
export async function rawStdio(
  t: TestContext,
  input: ConfigInput,
): Promise<{ sb: Switchboard; write(line: string): void; inbox: Inbox<Record<string, unknown>> }> {
  const toGateway = new PassThrough();
  const fromGateway = new PassThrough();
  const sb = await startGateway(t, input, { stdio: { input: toGateway, output: fromGateway } });
  t.after(() => void toGateway.end());
  return { sb, write: (line) => void toGateway.write(line + '\n'), inbox: readMessages(fromGateway) };
}

/** Parses every NDJSON line of a stream into an inbox. */
export function readMessages(stream: NodeJS.ReadableStream): Inbox<Record<string, unknown>> {
  const inbox = new Inbox<Record<string, unknown>>();
  let buffered = '';
  stream.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim()) inbox.push(JSON.parse(line) as Record<string, unknown>);
    }
  });
  return inbox;
}

/** A 2025-11-25 initialize request, as a raw host sends it. */
export function initialize(capabilities: object = {}): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } },
  });
}

/** The JSON a probe tool put in its first text block. */
export function textJson(result: unknown): Record<string, unknown> {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  const first = content[0];
  if (first?.type !== 'text' || first.text === undefined)
    throw new Error(`no text content in ${JSON.stringify(result)}`);
  return JSON.parse(first.text) as Record<string, unknown>;
}

export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content[0]?.text ?? '';
}

/** Resolves with the next value `accept` takes; `push` feeds it. */
export class Inbox<T> {
  readonly items: T[] = [];
  private waiters: { accept: (item: T) => boolean; resolve: (item: T) => void }[] = [];

  push = (item: T): void => {
    this.items.push(item);
    for (const w of [...this.waiters]) {
      if (w.accept(item)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(item);
      }
    }
  };

  /** The first item (already here or still to come) that `accept` takes. */
  next(accept: (item: T) => boolean = () => true): Promise<T> {
    const found = this.items.find(accept);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ accept, resolve }));
  }
}

export interface RawResponse {
  status: number;
  headers: Headers;
  /** The JSON body, or every SSE `data:` message of the body. */
  messages: Record<string, unknown>[];
}

const ACCEPT = 'application/json, text/event-stream';

export interface RawStream {
  status: number;
  headers: Headers;
  /** Messages as they arrive: the JSON body, or each SSE `data:` message. */
  inbox: Inbox<Record<string, unknown>>;
  /** Resolves when the body has ended. */
  ended: Promise<void>;
}

/** One raw POST to the HTTP front; its messages are read as they arrive. */
export async function rawOpen(
  url: string,
  body: string,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<RawStream> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { accept: ACCEPT, 'content-type': 'application/json', ...headers },
    body,
    signal,
  });
  const inbox = new Inbox<Record<string, unknown>>();
  const sse = (res.headers.get('content-type') ?? '').includes('text/event-stream');
  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of res.body ?? []) {
      buffered += decoder.decode(chunk as Uint8Array, { stream: true });
      if (!sse) continue;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.startsWith('data: ')) inbox.push(JSON.parse(line.slice(6)) as Record<string, unknown>);
      }
    }
    if (!sse && buffered.length > 0) inbox.push(JSON.parse(buffered) as Record<string, unknown>);
  })();
  return { status: res.status, headers: res.headers, inbox, ended };
}

/** One raw POST to the HTTP front, read to its end. */
export async function rawPost(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const stream = await rawOpen(url, body, headers);
  await stream.ended;
  return { status: stream.status, headers: stream.headers, messages: stream.inbox.items };
}

/** Opens a session with a raw initialize; returns the Mcp-Session-Id. */
export async function rawSession(url: string, capabilities: object = {}): Promise<string> {
  const init = await rawPost(url, initialize(capabilities));
  const id = init.headers.get('mcp-session-id');
  if (init.status !== 200 || !id) throw new Error(`initialize failed: ${init.status}`);
  await rawPost(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), {
    'mcp-session-id': id,
  });
  return id;
}

/** The response to request `id` among raw messages. */
export function responseTo(
  messages: Record<string, unknown>[],
  id: number | string,
): Record<string, unknown> {
  const found = messages.find((m) => m.id === id && ('result' in m || 'error' in m));
  if (!found) throw new Error(`no response to ${id} in ${JSON.stringify(messages)}`);
  return found;
}
