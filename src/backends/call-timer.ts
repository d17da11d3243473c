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
  const tool =
    method === 'tools/call' && typeof params.name === 'string' ? timeouts.tools[params.name] : undefined;
  return { callMs: tool?.callMs ?? timeouts.callMs, idleMs: tool?.idleMs ?? timeouts.idleMs };
}

export class CallTimer {
  private readonly controller = new AbortController();
  private readonly cap: NodeJS.Timeout;
  private idle: NodeJS.Timeout | undefined;
  /** Which limit ran out, once one has. */
  expired: string | undefined;

  constructor(private readonly limits: CallLimits) {
    this.cap = setTimeout(() => this.expire(`did not answer within ${limits.callMs} ms`), limits.callMs);
    this.touch();
  }

  /** Aborted when a limit runs out. */
  get signal(): AbortSignal {
    return this.controller.signal;
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
    // The reason travels to the backend in notifications/cancelled.
    this.controller.abort(new Error(`timed out: ${why}`));
  }
}
