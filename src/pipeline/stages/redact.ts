// Redaction, just outside route: what a call produces (its result, its error, and what the backend
// sends the caller meanwhile: progress, log lines, sampling and elicitation requests) reaches the
// caller, and the audit stage outside it, with every vault secret, working bridge token and
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
  return async function redact(ctx, next) {
    if (!redactor.active) return next();
    // Replaced in place: the backend finds the call (and its reply) through the call context.
    (ctx as { reply: Reply }).reply = redactingReply(ctx.reply, redactor);
    try {
      await next();
    } catch (err) {
      throw redactError(err, redactor);
    }
    // On the way back the result is the caller's answer to a backend: it is not switchboard's to alter.
    if (ctx.result && !ctx.returning && !REVEALING.has(ctx.method)) ctx.result = redactor.deep(ctx.result);
  };
}

/** Replies that redact already: a call made for another (or a question about it) shares its reply. */
const redacting = new WeakSet<Reply>();

function redactingReply(reply: Reply, redactor: Redactor): Reply {
  if (redacting.has(reply)) return reply;
  // Everything else the reply has (now or later) is inherited unchanged.
  const wrapped = Object.create(reply) as Reply;
  redacting.add(wrapped);
  return Object.assign(wrapped, {
    notify: (method: string, params: Params) => reply.notify(method, redactor.deep(params)),
    request: (method: string, params: Params | undefined, signal: AbortSignal) =>
      reply.request(method, redactor.deep(params), signal),
  });
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
