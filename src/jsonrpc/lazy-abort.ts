// A call's cancellation, with its AbortSignal made only when something needs a real one. Most calls
// end without anyone listening, or with only our own code listening; an AbortController with its
// event target was the largest single allocation of a call, and a share of its CPU.

/** What our own code needs of an abort: an AbortSignal has it, and a LazyAbort has it without making one. */
export interface AbortSource {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** A one-shot listener for the abort (every listener here is one-shot). */
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** What `early` holds before the abort. */
const NOT_ABORTED: unique symbol = Symbol('not aborted');

export class LazyAbort implements AbortSource {
  private controller: AbortController | undefined;
  /** The reason of an abort that came before anyone asked for the signal. */
  private early: unknown = NOT_ABORTED;
  /** Listeners added before the signal was made (each runs once). */
  private listeners: (() => void)[] | undefined;

  get aborted(): boolean {
    return this.controller ? this.controller.signal.aborted : this.early !== NOT_ABORTED;
  }

  get reason(): unknown {
    if (this.controller) return this.controller.signal.reason;
    return this.early === NOT_ABORTED ? undefined : this.early;
  }

  /**
   * The signal, made now if it was not yet (for code that needs a real one: a fetch, a library):
   * aborted already, with the reason, if the abort came first; listeners added before move to it.
   */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.early !== NOT_ABORTED) this.controller.abort(this.early);
      const waiting = this.listeners;
      this.listeners = undefined;
      for (const listener of waiting ?? [])
        this.controller.signal.addEventListener('abort', listener, { once: true });
    }
    return this.controller.signal;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.controller) return this.controller.signal.addEventListener('abort', listener, { once: true });
    // As on an AbortSignal, a listener added after the abort is never called.
    if (this.early !== NOT_ABORTED) return;
    // As on an AbortSignal, the same listener added twice is one listener.
    const listeners = (this.listeners ??= []);
    if (!listeners.includes(listener)) listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    if (this.controller) return this.controller.signal.removeEventListener('abort', listener);
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }

  /** As AbortController.abort: the first abort's reason stays; none given is an AbortError. */
  abort(reason?: unknown): void {
    if (this.controller) return this.controller.abort(reason);
    if (this.early !== NOT_ABORTED) return;
    this.early = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    const waiting = this.listeners;
    if (!waiting) return;
    // As an AbortSignal dispatches: every listener runs, in order, once; one that an earlier one
    // removed does not run; one that throws does not stop the rest, and its error is reported as
    // an AbortSignal's would be (uncaught, after this abort returns).
    let failed: { error: unknown } | undefined;
    for (const listener of [...waiting]) {
      const at = waiting.indexOf(listener);
      if (at < 0) continue;
      waiting.splice(at, 1);
      try {
        listener();
      } catch (error) {
        failed ??= { error };
      }
    }
    this.listeners = undefined;
    if (failed)
      process.nextTick(() => {
        throw failed.error;
      });
  }
}

/** The signal of an abort source, made if it is a LazyAbort that has none yet. */
export function signalOf(source: AbortSignal | LazyAbort): AbortSignal {
  return source instanceof LazyAbort ? source.signal : source;
}
