// A modern backend's `input_required` result, answered for a caller that cannot take one (a
// legacy host, a backend on the bridge): each of its input requests becomes a request to the
// caller in its own session, and the call is retried with the answers and the backend's
// requestState until the backend completes it.
import { LocalError } from '../errors/errors.js';
import type { Params, Result } from '../jsonrpc/message.js';

/** Rounds of questions one call may take before switchboard gives up on it. */
const MAX_ROUNDS = 32;

export function isInputRequired(result: Result | undefined): boolean {
  return result?.resultType === 'input_required';
}

/** Puts one input request to the caller (through the return path) and resolves with its answer. */
export type AskCaller = (method: string, params: Params | undefined) => Promise<Result>;

export async function answerInputRequired(
  first: Result,
  ask: AskCaller,
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
      Object.entries(requests).map(async ([key, r]) => [key, await ask(String(r.method), r.params)] as const),
    );
    const extra: Params = {};
    if (answers.length) extra.inputResponses = Object.fromEntries(answers);
    if (result.requestState !== undefined) extra.requestState = result.requestState;
    result = await retry(extra);
  }
  return result;
}
