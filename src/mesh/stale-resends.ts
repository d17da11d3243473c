// Requests a channel sent MACed under a pair session, kept until answered: if their target refuses
// the session as stale (it restarted and its new key has not arrived), the request goes again once,
// signed with the node key. Only a refusal on the target's own subject naming the very assertion
// sent counts: answers are not signed, and a forged refusal must not make a target run a call twice.
import type { RequestOrigin } from '../jsonrpc/channel.js';
import type { JsonRpcMessage, RequestId } from '../jsonrpc/message.js';
import { digestOf, isMaced } from './assertion.js';
import { STALE_SESSION } from './subjects.js';

export interface Resendable {
  message: JsonRpcMessage;
  origin: RequestOrigin | undefined;
  jws: string;
}

export class StaleResends {
  private readonly held = new Map<RequestId, Resendable>();

  /** A request sent to its node with `jws`: kept when MACed (only those can be refused as stale). */
  sent(id: RequestId, request: Resendable): void {
    if (isMaced(request.jws)) this.held.set(id, request);
  }

  forget(id: RequestId): void {
    this.held.delete(id);
  }

  clear(): void {
    this.held.clear();
  }

  /**
   * The request to send again when `answer` is a stale refusal of it by `node` (the node it went
   * to), on that node's subject (`subjectNode`); the request is no longer kept either way.
   */
  take(answer: JsonRpcMessage, node: string | undefined, subjectNode: string): Resendable | undefined {
    const id = (answer as { id: RequestId }).id;
    const sent = this.held.get(id);
    this.held.delete(id);
    const data = (answer as { error?: { data?: { reason?: unknown; assertion?: unknown } } }).error?.data;
    if (!sent || node === undefined || data?.reason !== STALE_SESSION) return undefined;
    if (subjectNode !== node || data.assertion !== digestOf(sent.jws)) return undefined;
    return sent;
  }
}
