// The two kinds of error: wire errors (what a client may see) and local errors (stable codes with
// a cause, mapped to the wire by the catalogue so a backend's failure never reads as the caller's).
import { LOCAL_ERRORS, WIRE, type LocalCode, type WireErrorBody } from './catalogue.js';

export { WIRE, type LocalCode } from './catalogue.js';

/** An error whose code and message are meant for the client as they are. */
export class WireError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'WireError';
  }

  toJSON(): WireErrorBody {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** An error a backend itself answered with: passed to the caller untouched. */
export class BackendWireError extends WireError {
  constructor(body: WireErrorBody) {
    super(body.code, body.message, body.data);
    this.name = 'BackendWireError';
  }
}

/** What a local error adds to `data` beside its reason; `backend` names the backend when one is known. */
export type LocalData = { backend?: string } & Record<string, unknown>;

/** Local failures: a stable code for logs and tests, a cause, never sent as they are. */
export class LocalError extends Error {
  readonly data: LocalData | undefined;

  constructor(
    readonly code: LocalCode,
    message: string,
    options?: { cause?: unknown; data?: LocalData | undefined },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LocalError';
    this.data = options?.data;
  }

  /** The same error with `more` in its data; what its data already says is kept. */
  with(more: LocalData): LocalError {
    const err = new LocalError(this.code, this.message, {
      cause: this.cause,
      data: { ...more, ...this.data },
    });
    err.stack = this.stack;
    return err;
  }
}

/**
 * Maps any thrown value to the body a client may see. A local error carries its code as
 * `data.reason`; one whose message is not exposed carries nothing else. Unknown errors never leak
 * their text.
 */
export function toWire(err: unknown): WireErrorBody {
  if (err instanceof WireError) return err.toJSON();
  if (err instanceof LocalError) {
    const m = LOCAL_ERRORS[err.code];
    if (!m.expose) return { code: m.code, message: 'Internal error', data: { reason: err.code } };
    return { code: m.code, message: err.message, data: { ...err.data, reason: err.code } };
  }
  return { code: WIRE.INTERNAL_ERROR, message: 'Internal error' };
}

/**
 * What the caller gets when a call forwarded to `backend` fails. A backend that answers -32700 or
 * -32600 says the request it got was broken, and that request was switchboard's: it reaches the
 * caller as -32603 naming the backend, with the backend's answer in `data.error`, not as the
 * caller's fault. Local errors get the backend's name; any other answer of the backend is its own
 * and passes as it is.
 */
export function backendFailure(backend: string, err: unknown): unknown {
  if (
    err instanceof BackendWireError &&
    (err.code === WIRE.PARSE_ERROR || err.code === WIRE.INVALID_REQUEST)
  ) {
    return new LocalError(
      'backend_protocol_error',
      `Backend ${backend} could not take the call it was forwarded: ${err.message}`,
      { cause: err, data: { backend, error: err.toJSON() } },
    );
  }
  if (err instanceof LocalError) return err.with({ backend });
  return err;
}
