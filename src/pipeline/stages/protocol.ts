// Refuses, inside the pipeline (so the refusal is observed and audited like any other), a call
// that breaks its era's rules: a modern request's envelope, version and routing headers, and a
// method its era does not have. Calls made inside switchboard on behalf of another are exempt:
// their parent passed this stage, and their methods are switchboard's choice. Any call whose
// params nest deeper than a message may is refused too, whoever makes it: encoding it for its
// target would exhaust the stack, and that failure would be taken for the target's.
import { WIRE, WireError } from '../../errors/errors.js';
import { paramsTooDeep } from '../../protocol/params-depth.js';
import { modernProblem } from '../../protocol/envelope.js';
import { methodSpec } from '../../protocol/methods.js';
import { notFound } from '../../protocol/not-found.js';
import type { Stage } from '../compose.js';

export function protocolStage(toolSchema: (name: string) => unknown): Stage {
  return function protocol(ctx, next) {
    if (ctx.refusal) {
      ctx.decision = { effect: 'deny', rule: 'protocol' };
      return Promise.reject(ctx.refusal);
    }
    const spec = methodSpec(ctx.method);
    // What a backend asks a caller exists only on the way back: from any door it is unknown.
    if (spec?.direction === 'ask' && !ctx.returning) {
      ctx.decision = { effect: 'deny', rule: 'protocol' };
      return Promise.reject(notFound(ctx.method, ctx.params));
    }
    const deep = paramsTooDeep(ctx.params);
    if (deep) {
      ctx.decision = { effect: 'deny', rule: 'protocol' };
      return Promise.reject(deep);
    }
    if (ctx.parent || ctx.returning) return next();
    let refusal: Error | undefined;
    if (ctx.reply.era === 'modern') {
      refusal = modernProblem(ctx.method, ctx.params, { headers: ctx.wire?.headers, toolSchema });
    } else if (spec?.eras.includes('legacy') === false) {
      refusal = new WireError(WIRE.METHOD_NOT_FOUND, `Method not found: ${ctx.method}`);
    }
    if (!refusal) return next();
    ctx.decision = { effect: 'deny', rule: 'protocol' };
    return Promise.reject(refusal);
  };
}
