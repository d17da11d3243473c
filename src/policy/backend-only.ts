// Handlers only backends may call (the vault's): no host reaches one, whatever a rule grants,
// because a rule broad enough to mean "everything" (`*`, a rule naming no target) must not hand a
// host's model a secret. Applied before any rule by the policy stage and `switchboard policy test`.
import type { Caller } from '../call/context.js';
import type { Subject, Verdict } from './policy.js';

/** The rule a refusal names in the audit record and the log. */
export const BACKEND_ONLY_RULE = 'handlers.backendOnly';

/** The refusal of a backend-only handler to a host; undefined for every other call. */
export function barredFromHost(
  caller: Caller,
  s: Subject,
  backendOnly: (method: string) => boolean,
): Verdict | undefined {
  if ((caller.kind !== 'host' && caller.kind !== 'admin') || s.kind !== 'handler' || !backendOnly(s.name))
    return undefined;
  return { effect: 'deny', rule: BACKEND_ONLY_RULE, auditValues: false };
}
