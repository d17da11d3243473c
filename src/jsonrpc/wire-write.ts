// Serialising a JSON-RPC message for the wire: JSON text, with each large string that came in as
// bytes (RawText) written as those same bytes, neither decoded nor copied. A message without
// any is one string, as JSON.stringify gives it.
import { type TextParts, withBytes } from '../encoding/raw-text.js';

/** A serialised message: one string, or parts when it carries large strings as bytes. */
export type WireText = string | TextParts;

/** The message as JSON. */
export function stringifyWire(message: unknown): WireText {
  return withBytes(() => JSON.stringify(message));
}

/** UTF-8 bytes of a serialised message. */
export function wireBytes(text: WireText): number {
  return typeof text === 'string' ? Buffer.byteLength(text) : text.bytes;
}
