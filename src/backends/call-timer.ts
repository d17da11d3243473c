// The time limits of one forwarded call: an absolute cap, and an idle limit that each progress
// notification from the backend resets (a long call that reports progress is alive).
import type { BackendConfig } from '../config/schema.js';
import type { Params } from '../jsonrpc/message.js';

export interface CallLimits {
  callMs: number;
  idleMs: number | undefined;
}

/** The limits for a call: the tool's own where configured, else the backend's. */
export function callLimits(timeouts: BackendConfig['timeouts'], method: string, params: Params): CallLimits {
  const name = method === 'tools/call' ? params.name : undefined;
  // Own entries only: the caller names the tool, and `constructor` is no configured tool.
  const tool =
    typeof name === 'string' && Object.hasOwn(timeouts.tools, name) ? timeouts.tools[name] : undefined;
  return { callMs: tool?.callMs ?? timeouts.callMs, idleMs: tool?.idleMs ?? timeouts.idleMs };
}

export class CallTimer {
  private readonly cap: NodeJS.Timeout;
  private idle: NodeJS.Timeout | undefined;
  /** Which limit ran out, once one has. */
  expired: string | undefined;

  /**
   * `onExpire` gets the reason, which travels to the backend in notifications/cancelled. The
   * timer owns no AbortController of its own: the request is withdrawn by id when a limit runs
   * out, and each controller costs a measurable share of a forwarded call's CPU.
   */
  constructor(
    private readonly limits: CallLimits,
    private readonly onExpire: (reason: Error) => void,
  ) {
    this.cap = setTimeout(() => this.expire(`did not answer within ${limits.callMs} ms`), limits.callMs);
    this.touch();
  }

  /** The backend showed signs of life (progress). */
  touch(): void {
    const { idleMs } = this.limits;
    if (idleMs === undefined || this.expired) return;
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.expire(`sent no progress for ${idleMs} ms`), idleMs);
  }

  dispose(): void {
    clearTimeout(this.cap);
    clearTimeout(this.idle);
  }

  private expire(why: string): void {
    this.expired = why;
    this.dispose();
    this.onExpire(new Error(`timed out: ${why}`));
  }
}
