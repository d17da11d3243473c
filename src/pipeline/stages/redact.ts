// Redaction, around every stage that answers a call (route, and switchboard's own meta-tools and
// scripts): what a call produces (its result, its error, and what the backend sends the caller
// meanwhile: progress, log lines, sampling and elicitation requests) reaches the caller, and the
// audit stage outside it, with every vault secret, working bridge token and
// configured pattern replaced by `[REDACTED:<name>]`, in object keys as in values (see the
// Redactor). `vault.get` is the one answer let through: its caller was granted that method
// precisely to receive the secret.
import { BackendWireError, LocalError, WireError } from '../../errors/errors.js';
import type { Params } from '../../jsonrpc/message.js';
import type { Redactor } from '../../vault/redactor.js';
import type { Stage } from '../compose.js';
import type { Reply } from '../../call/context.js';

/** Handler results that are a secret on purpose, for a caller granted the method. */
const REVEALING = new Set(['vault.get']);

export function redactStage(redactor: Redactor): Stage {
  // Not async itself: with nothing to redact the call passes straight through, and an async
  // wrapper is a promise per call.
  return function redact(ctx, next) {
    if (!redactor.active) return next();
    // Replaced in place: the backend finds the call (and its reply) through the call context.
    (ctx as { reply: Reply }).reply = redactingReply(ctx.reply, redactor);
    return next().then(
      () => {
        // On the way back the result is the caller's answer to a backend: it is not switchboard's to alter.
        if (ctx.result && !ctx.returning && !REVEALING.has(ctx.method))
          ctx.result = redactor.deep(ctx.result);
      },
      (err: unknown) => {
        throw redactError(err, redactor);
      },
    );
  };
}

/**
 * A reply that redacts what goes through it and reads everything else from the reply it wraps, at
 * the time it is read. A class rather than `Object.create(reply)`: making each call's reply the
 * prototype of another object cost V8 a prototype map per call.
 */
class RedactingReply implements Reply {
  constructor(
    private readonly inner: Reply,
    private readonly redactor: Redactor,
  ) {}
  get sessionKey(): string {
    return this.inner.sessionKey;
  }
  get capabilities(): Record<string, unknown> {
    return this.inner.capabilities;
  }
  get era(): Reply['era'] {
    return this.inner.era;
  }
  get clientInfo(): Reply['clientInfo'] {
    return this.inner.clientInfo;
  }
  get logLevel(): string | undefined {
    return this.inner.logLevel;
  }
  get session(): Reply['session'] {
    return this.inner.session;
  }
  get view(): string | undefined {
    return this.inner.view;
  }
  get waiting(): Reply['waiting'] {
    const inner = this.inner;
    return inner.waiting && (() => inner.waiting!());
  }
  get refuse(): Reply['refuse'] {
    const inner = this.inner;
    return inner.refuse && ((error: Error) => inner.refuse!(error));
  }
  // The method too: a backend names the notifications and requests it sends as freely as their params.
  notify(method: string, params: Params): void {
    this.inner.notify(this.redactor.text(method), this.redactor.deep(params));
  }
  request(method: string, params: Params | undefined, signal: AbortSignal): ReturnType<Reply['request']> {
    return this.inner.request(this.redactor.text(method), this.redactor.deep(params), signal);
  }
}

/** Replies that redact already: a call made for another (or a question about it) shares its reply. */
function redactingReply(reply: Reply, redactor: Redactor): Reply {
  return reply instanceof RedactingReply ? reply : new RedactingReply(reply, redactor);
}

/** The same error with its message and data redacted (a new one only when something changed). */
export function redactError(err: unknown, redactor: Redactor): unknown {
  if (err instanceof WireError) {
    const message = redactor.text(err.message);
    const data = redactor.deep(err.data);
    if (message === err.message && data === err.data) return err;
    return err instanceof BackendWireError
      ? new BackendWireError({ code: err.code, message, ...(data === undefined ? {} : { data }) })
      : new WireError(err.code, message, data);
  }
  if (err instanceof LocalError) {
    const message = redactor.text(err.message);
    const data = redactor.deep(err.data);
    if (message === err.message && data === err.data) return err;
    return new LocalError(err.code, message, { cause: err.cause, data });
  }
  return err;
}
