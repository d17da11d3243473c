// Raw SSE for tests of resumable streams: each event with its id, retry and data as sent, so a test
// can cut a connection after a chosen event and come back with Last-Event-ID.
import { Inbox } from '../gateway/harness.js';

export interface SseEvent {
  id?: string;
  retry?: number;
  /** The parsed JSON-RPC message; undefined for an event without data (a priming event). */
  message?: Record<string, unknown>;
}

export interface SseConnection {
  status: number;
  headers: Headers;
  events: Inbox<SseEvent>;
  /** Resolves when the server ended the body (or the connection was cut). */
  ended: Promise<void>;
  /** Cuts the connection, as a network failure would. */
  cut(): void;
}

const ACCEPT = 'application/json, text/event-stream';

/** A POST (with `body`) or a GET (without) to the HTTP front, read event by event. */
export async function openSse(
  url: string,
  body: string | undefined,
  headers: Record<string, string>,
): Promise<SseConnection> {
  const ac = new AbortController();
  const res = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { accept: ACCEPT, 'content-type': 'application/json', ...headers },
    body,
    signal: ac.signal,
  });
  const events = new Inbox<SseEvent>();
  // Once cut, nothing more is taken from the body, and the reading is over at once: an abort does
  // not always reach a body read already under way.
  let cut = false;
  const aborted = new Promise<void>((resolve) => ac.signal.addEventListener('abort', () => resolve()));
  const read = (async () => {
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of res.body ?? []) {
        if (cut) break;
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffered.indexOf('\n\n')) !== -1) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          events.push(parseEvent(block));
        }
      }
    } catch {
      // Cut: what arrived before is in `events`.
    }
  })();
  const ended = Promise.race([read, aborted]);
  return {
    status: res.status,
    headers: res.headers,
    events,
    ended,
    cut: () => {
      cut = true;
      ac.abort();
    },
  };
}

function parseEvent(block: string): SseEvent {
  const event: SseEvent = {};
  let data = '';
  for (const line of block.split('\n')) {
    const colon = line.indexOf(':');
    if (colon === 0) continue;
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') event.id = value;
    else if (field === 'retry') event.retry = Number(value);
    else if (field === 'data') data += value;
  }
  if (data !== '') event.message = JSON.parse(data) as Record<string, unknown>;
  return event;
}

/** Waits for the event carrying a message that `match` accepts. */
export function nextMessage(
  conn: SseConnection,
  match: (m: Record<string, unknown>) => boolean,
): Promise<SseEvent> {
  return conn.events.next((e) => e.message !== undefined && match(e.message));
}
