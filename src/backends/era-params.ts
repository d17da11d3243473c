// A request's params as each era wants them: the modern per-request envelope in `_meta`, or legacy
// params with no envelope keys left in them.
import type { Params } from '../jsonrpc/message.js';
import type { CallContext } from '../call/context.js';
import { ENVELOPE_KEYS, LATEST_MODERN, META, SERVER_INFO } from '../protocol/versions.js';

/**
 * The modern per-request envelope: the caller's own version-independent identity and
 * capabilities (not switchboard's), and its log level; switchboard's own for its own requests
 * (`reply` undefined). `protocolVersion` is the one the backend agreed to, if it has.
 */
export function withEnvelope(
  protocolVersion: string | undefined,
  reply: CallContext['reply'] | undefined,
  params?: Params,
): Params {
  const meta: Record<string, unknown> = {
    ...params?._meta,
    [META.protocolVersion]: protocolVersion ?? LATEST_MODERN,
    [META.clientCapabilities]: reply?.capabilities ?? {},
    [META.clientInfo]: reply?.clientInfo ?? SERVER_INFO,
  };
  if (reply?.logLevel !== undefined) meta[META.logLevel] = reply.logLevel;
  else delete meta[META.logLevel];
  return { ...params, _meta: meta };
}

/** A caller's params for a legacy backend: a modern caller's envelope keys taken out of `_meta`. */
export function withoutEnvelope(params: Params): Params {
  const meta = params._meta;
  if (!meta || !(META.protocolVersion in meta || META.clientCapabilities in meta)) return params;
  const kept = Object.fromEntries(Object.entries(meta).filter(([k]) => !ENVELOPE_KEYS.includes(k)));
  const out: Params = { ...params, _meta: kept };
  if (Object.keys(kept).length === 0) delete out._meta;
  return out;
}
