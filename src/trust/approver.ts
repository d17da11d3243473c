// Asks a human whether a call a rule marked `approve` may go on: the host the call came from, by
// an elicitation request (a bridge call asks the host of the call it was made for: never the
// calling backend itself), or else an operator through `switchboard approvals`, by a pending
// record in the trust database that this process polls. Every answer is bound to the exact
// caller, target and arguments, is used once, and expires.
import { LocalError, WIRE, WireError } from '../errors/errors.js';
import type { Result } from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import type { CallContext, Reply } from '../call/context.js';
import { linkSignals } from '../call/signals.js';
import { abortOf, isAborted } from '../call/new-call.js';
import { callerKey, type Subject } from '../policy/policy.js';
import { ApprovalStore, bindingOf, type ApprovalSubject } from './approval-store.js';

export const APPROVAL_META = 'io.switchboard/approval';
/** How every approval question switchboard asks a host begins. */
export const APPROVAL_PROMPT = 'Approve this call?';

export interface ApproverOptions {
  timeoutMs: number;
  pollMs: number;
  /** Whether an operator may be asked when the host cannot be. */
  operator: boolean;
  /** Where operator approvals are kept; without it only hosts can be asked. */
  store: ApprovalStore | undefined;
  log: Logger;
}

export class Approver {
  /** Calls waiting for an operator, by approval id: woken when the database changed. */
  private readonly waiting = new Map<string, () => void>();
  private poll: NodeJS.Timeout | undefined;
  private version = -1;

  constructor(private readonly options: ApproverOptions) {}

  /**
   * Resolves when a human approved this very call; otherwise throws the error the caller gets
   * (declined, expired, nobody to ask) or a cancellation.
   */
  async approve(ctx: CallContext, subject: Subject, args: unknown, rule: string): Promise<void> {
    const bound: ApprovalSubject = {
      caller: callerKey(ctx.caller),
      method: ctx.method,
      backend: subject.backend ?? null,
      target: subject.name,
      arguments: args ?? null,
    };
    const host = hostToAsk(ctx);
    if (host) {
      const answer = await this.askHost(host, ctx, bound, subject.exposed, rule);
      if (answer !== 'unreachable') return;
    }
    const store = this.options.store;
    if (!this.options.operator || !store) {
      // On but without a store: the rule came with a reload, and at start nothing needed one.
      const operator = this.options.operator
        ? 'operator approval needs a restart (no rule asked for approval at start, and audit and pinning are off)'
        : 'operator approval is off (policy.approval.operator)';
      throw new WireError(
        WIRE.POLICY_REFUSED,
        `${subject.exposed} needs approval (policy rule ${rule}), and no one can be asked: the host cannot answer elicitation requests and ${operator}`,
        { reason: 'approval_unavailable', rule },
      );
    }
    return this.askOperator(store, ctx, bound, subject.exposed, rule);
  }

  private async askHost(
    host: Reply,
    ctx: CallContext,
    bound: ApprovalSubject,
    exposed: string,
    rule: string,
  ): Promise<'approved' | 'unreachable'> {
    const binding = bindingOf(bound);
    const { timeoutMs } = this.options;
    const link = linkSignals([abortOf(ctx)]);
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      link.abort();
    }, timeoutMs);
    let result: Result;
    try {
      result = await host.request(
        'elicitation/create',
        {
          message: describeCall(bound, exposed, rule, timeoutMs),
          requestedSchema: {
            type: 'object',
            properties: {
              approve: { type: 'boolean', title: 'Approve this call', description: 'Only this call, once' },
            },
            required: ['approve'],
          },
          // The binding makes the request itself differ whenever the call does.
          _meta: { [APPROVAL_META]: { sha256: binding, rule } },
        },
        link.signal,
      );
    } catch (err) {
      if (expired) throw expiredError(exposed, rule, timeoutMs);
      if (isAborted(ctx)) throw new LocalError('cancelled', 'Request cancelled');
      // A host that cannot answer leaves the decision to an operator (or refuses, without one).
      this.options.log.warn(
        { rule, err: err instanceof Error ? err.message : String(err) },
        'the host could not be asked for approval',
      );
      return 'unreachable';
    } finally {
      clearTimeout(timer);
      link.unlink();
    }
    const content = result.content as { approve?: unknown } | undefined;
    if (result.action === 'accept' && content?.approve === true) return 'approved';
    throw new WireError(
      WIRE.POLICY_REFUSED,
      `Call to ${exposed} declined by the host (policy rule ${rule})`,
      {
        reason: 'approval_declined',
        rule,
      },
    );
  }

  private async askOperator(
    store: ApprovalStore,
    ctx: CallContext,
    bound: ApprovalSubject,
    exposed: string,
    rule: string,
  ): Promise<void> {
    if (ctx.signal.aborted) throw new LocalError('cancelled', 'Request cancelled');
    const { timeoutMs } = this.options;
    const record = store.create(bound, { exposed, rule, ttlMs: timeoutMs });
    const binding = bindingOf(bound);
    this.options.log.info(
      { approval: record.id, caller: bound.caller, target: exposed, rule },
      `call waits for approval: switchboard approvals approve ${record.id}`,
    );
    let onAbort: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        const check = () => {
          const now = store.get(record.id);
          if (!now || now.status === 'pending') return;
          if ((now.status === 'approved' || now.status === 'denied') && !store.verdictGenuine(now)) {
            // Written into the file by something without the key: not a verdict. Put back, so
            // the operator can still decide, and keep waiting.
            this.options.log.warn(
              { approval: record.id, status: now.status },
              'an approval verdict not written by the operator (its MAC does not verify) was ignored',
            );
            store.undoForged(record.id);
            return;
          }
          if (now.status === 'approved') {
            // Used once, and only for the call it was made for: a record altered meanwhile fails here.
            if (store.consume(record.id, binding)) resolve();
            else reject(mismatchError(exposed, rule, record.id));
          } else if (now.status === 'denied') {
            reject(
              new WireError(
                WIRE.POLICY_REFUSED,
                `Call to ${exposed} declined by an operator (policy rule ${rule}, approval ${record.id})`,
                { reason: 'approval_declined', rule, approval: record.id },
              ),
            );
          } else {
            reject(mismatchError(exposed, rule, record.id));
          }
        };
        this.waiting.set(record.id, check);
        this.startPolling(store);
        timer = setTimeout(() => {
          store.close(record.id, 'expired');
          reject(expiredError(exposed, rule, timeoutMs, record.id));
        }, timeoutMs);
        timer.unref();
        onAbort = () => {
          store.close(record.id, 'withdrawn');
          reject(new LocalError('cancelled', 'Request cancelled'));
        };
        ctx.signal.addEventListener('abort', onAbort, { once: true });
      });
    } finally {
      clearTimeout(timer);
      if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
      this.waiting.delete(record.id);
      if (this.waiting.size === 0) this.stopPolling();
    }
  }

  /** One timer for every waiting call; a poll reads the rows only when the database changed. */
  private startPolling(store: ApprovalStore): void {
    if (this.poll) return;
    this.version = -1;
    this.poll = setInterval(() => {
      try {
        const v = store.dataVersion();
        if (v === this.version) return;
        this.version = v;
        for (const check of [...this.waiting.values()]) check();
      } catch (err) {
        this.options.log.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'reading approvals failed',
        );
      }
    }, this.options.pollMs);
    // A waiting call must not keep an otherwise finished process alive.
    this.poll.unref();
  }

  private stopPolling(): void {
    clearInterval(this.poll);
    this.poll = undefined;
  }
}

/**
 * Whom to ask: a host caller that takes elicitation requests; for a bridge call, the host of the
 * outermost call it was made for. A backend is never asked to approve its own call.
 */
function hostToAsk(ctx: CallContext): Reply | undefined {
  let call: CallContext | undefined = ctx;
  // An A2A agent is asked as a host is: the question becomes its task's input-required turn.
  const asked = (c: CallContext) => c.caller.kind === 'host' || c.caller.kind === 'agent';
  while (call && !asked(call)) call = call.parent;
  if (!call || !asked(call)) return undefined;
  return call.reply.capabilities.elicitation ? call.reply : undefined;
}

function describeCall(b: ApprovalSubject, exposed: string, rule: string, timeoutMs: number): string {
  const what =
    b.method === 'tools/call'
      ? `tool "${b.target}" of server "${b.backend}"`
      : b.backend
        ? `${b.method} on "${b.target}" of server "${b.backend}"`
        : `${b.method}`;
  return (
    `${APPROVAL_PROMPT} ${b.caller} wants to call ${what} (${exposed}) with arguments ` +
    `${JSON.stringify(b.arguments)}. ` +
    (rule === 'pinning.onChange' || rule === 'pinning.newTools'
      ? `Asked because its definition ${rule === 'pinning.newTools' ? 'is new since its server was first pinned' : 'changed since it was pinned'} (switchboard pins diff ${b.backend} ${b.target})`
      : `Asked by policy rule "${rule}"`) +
    `; the question expires in ${Math.round(timeoutMs / 1000)} s.`
  );
}

function expiredError(exposed: string, rule: string, timeoutMs: number, id?: string): WireError {
  return new WireError(
    WIRE.POLICY_REFUSED,
    `Call to ${exposed} was not approved within ${timeoutMs} ms (policy rule ${rule}${id ? `, approval ${id}` : ''}): approval expired`,
    { reason: 'approval_expired', rule, ...(id && { approval: id }) },
  );
}

function mismatchError(exposed: string, rule: string, id: string): WireError {
  return new WireError(
    WIRE.POLICY_REFUSED,
    `Call to ${exposed} refused: approval ${id} does not match this call or was already used (policy rule ${rule})`,
    { reason: 'approval_mismatch', rule, approval: id },
  );
}
