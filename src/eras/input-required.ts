// A modern backend's `input_required` result, answered for a caller that cannot take one (a
// legacy host, a backend on the bridge): each of its input requests becomes a request to the
// caller in its own session, and the call is retried with the answers and the backend's
// requestState until the backend completes it.
import { LocalError } from '../errors.js';
import type { Params, Result } from '../jsonrpc/message.js';
import type { CallContext } from '../pipeline/context.js';
import { askCaller } from '../gateway/backend-messages.js';

/** Rounds of questions one call may take before switchboard gives up on it. */
const MAX_ROUNDS = 32;

export function isInputRequired(result: Result | undefined): boolean {
  return result?.resultType === 'input_required';
}

export async function answerInputRequired(
  ctx: CallContext,
  first: Result,
  retry: (extra: Params) => Promise<Result>,
): Promise<Result> {
  let result = first;
  for (let round = 1; isInputRequired(result); round++) {
    if (round > MAX_ROUNDS) {
      throw new LocalError(
        'internal',
        `the backend asked for input more than ${MAX_ROUNDS} times in one call`,
      );
    }
    const requests = (result.inputRequests ?? {}) as Record<string, { method?: unknown; params?: Params }>;
    const answers = await Promise.all(
      Object.entries(requests).map(
        async ([key, r]) =>
          [key, await askCaller(ctx.reply, String(r.method), r.params, ctx.signal)] as const,
      ),
    );
    const extra: Params = {};
    if (answers.length) extra.inputResponses = Object.fromEntries(answers);
    if (result.requestState !== undefined) extra.requestState = result.requestState;
    result = await retry(extra);
  }
  return result;
}
