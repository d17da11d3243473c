// The one table of errors: every wire code switchboard sends and every local code, with the HTTP
// status where the status carries the error, whether its message is exposed, whose doing it is and
// what it means. errors.ts, the HTTP front and docs/errors.md (catalogue-doc.ts) all read it; the
// entries themselves are in protocol-errors.ts and local-errors.ts.
import { LOCAL_ERRORS, type LocalCode } from './local-errors.js';
import { PROTOCOL_ERRORS } from './protocol-errors.js';
import type { CatalogueEntry, WireErrorBody } from './wire-codes.js';

export {
  WIRE,
  GROUPS,
  type CatalogueEntry,
  type Fault,
  type LocalEntry,
  type WireErrorBody,
} from './wire-codes.js';
export { PROTOCOL_ERRORS } from './protocol-errors.js';
export { LOCAL_ERRORS, type LocalCode } from './local-errors.js';

export function isLocalCode(value: unknown): value is LocalCode {
  return typeof value === 'string' && Object.hasOwn(LOCAL_ERRORS, value);
}

const PROTOCOL_BY_CODE = new Map<number, CatalogueEntry>(
  Object.values(PROTOCOL_ERRORS).map((e) => [e.code, e]),
);

/**
 * The HTTP status an error gets where the status carries it, or undefined (200, the error in the
 * body). A local code is known by `data.reason` together with its wire code, since several share one.
 */
export function httpStatusOf(body: WireErrorBody): number | undefined {
  const reason = (body.data as { reason?: unknown } | undefined)?.reason;
  const local = isLocalCode(reason) ? LOCAL_ERRORS[reason] : undefined;
  if (local?.code === body.code) return local.http;
  return PROTOCOL_BY_CODE.get(body.code)?.http;
}
