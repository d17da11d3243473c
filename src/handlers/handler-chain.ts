// The handler chain: methods served inside switchboard (vault.sign, context.get, ...). Extensions
// register them by name or by `prefix.*`; the first registration that claims a method serves it.
import type { Params, Result } from '../jsonrpc/message.js';
import type { Caller } from '../call/context.js';

export interface HandlerContext {
  readonly caller: Caller;
  readonly callId: string;
  readonly signal: AbortSignal;
  /** Makes a further call as the same caller, as a child of this one (same pipeline). */
  dispatch(method: string, params?: Params): Promise<Result>;
  /**
   * Sends a notification to the caller on this call's reply (a watch's changes, a subscription's
   * events): it passes the redact stage like the call's progress does, and goes nowhere for a
   * caller nothing can be sent to (in process).
   */
  notify(method: string, params: Params): void;
}

export type Handler = (params: Params, ctx: HandlerContext) => Promise<Result> | Result;

interface Registration {
  pattern: string;
  owner: string;
  handler: Handler;
  /** Only backends may call it: no host reaches it, whatever the policy grants (policy stage). */
  backendOnly: boolean;
  /** A long-lived call (a watch, a subscription): not cut by bridge.handlerTimeoutMs. */
  streams: boolean;
}

export interface RegisterOptions {
  /** Only backends may call the method; hosts never reach it, whatever a policy rule says. */
  backendOnly?: boolean | undefined;
  /** The call stays open until its caller cancels it: the handler time limit does not apply. */
  streams?: boolean | undefined;
}

/** Handler methods are namespaced `<extension>.<operation>`; MCP's own methods use `/`. */
export const HANDLER_METHOD = /^[a-z][a-z0-9_-]*(\.[A-Za-z0-9_-]+)+$/;

export class HandlerChain {
  private readonly chain: Registration[] = [];

  register(pattern: string, handler: Handler, owner = 'switchboard', options: RegisterOptions = {}): void {
    const check = pattern.endsWith('.*') ? `${pattern.slice(0, -2)}.x` : pattern;
    if (!HANDLER_METHOD.test(check)) {
      throw new Error(`handler name "${pattern}" must look like "extension.operation" (or "extension.*")`);
    }
    this.chain.push({
      pattern,
      owner,
      handler,
      backendOnly: options.backendOnly === true,
      streams: options.streams === true,
    });
  }

  find(method: string): Handler | undefined {
    return this.claim(method)?.handler;
  }

  /** Whether the handler serving `method` is one only backends may call. */
  backendOnly(method: string): boolean {
    return this.claim(method)?.backendOnly ?? false;
  }

  /** Whether the handler serving `method` stays open until cancelled (no time limit). */
  streams(method: string): boolean {
    return this.claim(method)?.streams ?? false;
  }

  private claim(method: string): Registration | undefined {
    for (const r of this.chain) {
      if (r.pattern === method) return r;
      if (r.pattern.endsWith('.*') && method.startsWith(r.pattern.slice(0, -1))) return r;
    }
    return undefined;
  }

  /** The registered names, for `switchboard` diagnostics and docs. */
  names(): { pattern: string; owner: string }[] {
    return this.chain.map(({ pattern, owner }) => ({ pattern, owner }));
  }
}
