// What a refused call looks like: the same error a name that does not exist gets, so a caller
// cannot tell denied from absent. The policy stage (stages/policy.ts) decides; this answers.
import type { WireError } from '../../errors/errors.js';
import { methodSpec, namedBy } from '../../protocol/methods.js';
import { notFound } from '../../protocol/not-found.js';
import type { CallContext } from '../../call/context.js';
import { textOf } from '../../encoding/text-of.js';

/** The name a grant is checked against: exposed tool/prompt name, resource URI, or the method. */
export function grantSubject(ctx: CallContext): string {
  const spec = methodSpec(ctx.method);
  // A call on a task is judged by the name the call that created it was made to.
  if (spec?.target === 'task') return ctx.target?.subject ?? ctx.method;
  return spec?.names ? textOf(namedBy(spec, ctx.params)) : ctx.method;
}

/** The error a refused target gets: exactly the one a target that does not exist gets. */
export function denied(ctx: CallContext): WireError {
  return notFound(ctx.method, ctx.params);
}
