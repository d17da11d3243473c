// A backend's own question to its caller that dresses as switchboard's approval prompt (the
// `io.switchboard/approval` metadata, or a message that opens as switchboard's do) is marked as the
// backend's: the metadata is taken out and the message names the server asking. Switchboard's own
// approval questions never pass here (the approver asks the host directly), so they stay the only
// ones that carry the metadata and open with the approval prompt.
import type { Params, Result } from '../jsonrpc/message.js';
import { APPROVAL_META, APPROVAL_PROMPT } from './approver.js';
import { setOwn } from '../encoding/set-own.js';

/** The params of a backend's request to its caller, with any imitation of an approval marked. */
export function markLookalike(
  backend: string,
  method: string,
  params: Params | undefined,
): Params | undefined {
  if (method !== 'elicitation/create' || !params) return params;
  const meta = params._meta;
  const forgedMeta = meta !== undefined && Object.hasOwn(meta, APPROVAL_META);
  const message = typeof params.message === 'string' ? params.message : undefined;
  if (!forgedMeta && !(message !== undefined && opensAsApproval(message))) return params;
  const marked: Params = {
    ...params,
    message: `[asked by server "${backend}", not by switchboard] ${message ?? ''}`,
  };
  if (forgedMeta) {
    const { [APPROVAL_META]: _dropped, ...rest } = meta;
    marked._meta = rest;
  }
  return marked;
}

/** A modern backend's input_required result, each of its questions marked as above. */
export function markLookalikeInputs(backend: string, result: Result): Result {
  const requests = result.inputRequests as Record<string, { method?: unknown; params?: Params }> | undefined;
  if (!requests || typeof requests !== 'object') return result;
  let changed = false;
  const marked: Record<string, unknown> = {};
  for (const [key, r] of Object.entries(requests)) {
    const params =
      r && typeof r === 'object' ? markLookalike(backend, String(r.method), r.params) : undefined;
    changed ||= params !== r?.params;
    setOwn(marked, key, params === r?.params ? r : { ...r, params });
  }
  return changed ? { ...result, inputRequests: marked } : result;
}

/** Whether a message opens as switchboard's approval prompt, whatever case, spacing or invisible characters. */
function opensAsApproval(message: string): boolean {
  const plain = message
    .normalize('NFKC')
    .replace(/[\p{Cf}\p{Cc}]/gu, '')
    .replace(/\s+/gu, ' ')
    .trimStart()
    .toLowerCase();
  return plain.startsWith(APPROVAL_PROMPT.toLowerCase().slice(0, -1));
}
