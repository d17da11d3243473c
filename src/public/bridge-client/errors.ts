// The one error a bridge client throws: a server's JSON-RPC error, or a failure on this side.

/** Failures that happen on this side, before or instead of a server answer. */
export type BridgeLocalCode =
  'not_configured' | 'unavailable' | 'closed' | 'cancelled' | 'message_too_large' | 'protocol';

/** A server's JSON-RPC error (numeric `code`, `data` as sent) or a local failure (string `code`). */
export class BridgeError extends Error {
  override name = 'BridgeError';
  constructor(
    readonly code: number | BridgeLocalCode,
    message: string,
    readonly data?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** What a request withdrawn through its signal rejects with. */
export function cancelledError(signal: { readonly reason: unknown } | undefined): BridgeError {
  return new BridgeError('cancelled', 'the request was cancelled', undefined, { cause: signal?.reason });
}
