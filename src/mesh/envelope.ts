// A message to a node's door on the wire: a one-line JSON header (sender, server, inbox, caller
// assertion), a newline, then the JSON-RPC message exactly as the entry node encoded it. The
// message is not a string inside the header's JSON: it is encoded once, read once, and its
// digest is taken over the very bytes that travelled.

/** A message to a node's door. */
export interface Envelope {
  /** The sending node. */
  from: string;
  /** The server of the target node the message is for. */
  server: string;
  /** Where answers and notifications go. */
  inbox: string;
  /** The caller assertion (compact JWS). */
  jws?: string | undefined;
  /** The JSON-RPC message; the assertion's digest covers it with `server` and `inbox` (routedMessage). */
  msg: string;
}

/** The envelope as sent: `JSON.stringify` never writes a raw newline, so the first one ends the header. */
export function encodeEnvelope(e: Envelope): string {
  const header = JSON.stringify({ from: e.from, server: e.server, inbox: e.inbox, jws: e.jws });
  return `${header}\n${e.msg}`;
}

/** An envelope as received, or why it is not one (nothing is answered to it: its inbox is unverified). */
export function decodeEnvelope(text: string): Envelope | { why: string } {
  const nl = text.indexOf('\n');
  if (nl === -1) return { why: 'no header line (a node of another switchboard version?)' };
  let header: unknown;
  try {
    header = JSON.parse(text.slice(0, nl));
  } catch {
    return { why: 'header is not JSON' };
  }
  if (typeof header !== 'object' || header === null) return { why: 'header is not an object' };
  const { from, server, inbox, jws } = header as Record<string, unknown>;
  if (typeof from !== 'string' || typeof server !== 'string' || typeof inbox !== 'string')
    return { why: 'header lacks from, server or inbox' };
  if (jws !== undefined && typeof jws !== 'string') return { why: 'header jws is not a string' };
  return { from, server, inbox, jws, msg: text.slice(nl + 1) };
}
