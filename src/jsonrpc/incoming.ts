// The other side's requests while we serve them: one abort signal each, which its
// `notifications/cancelled` or the end of the connection aborts, and one request per id at a time.
import { WIRE, WireError } from '../errors/errors.js';
import type { RequestId } from './message.js';

export class IncomingRequests {
  private readonly inFlight = new Map<RequestId, AbortController>();

  /** Requests being served. */
  get size(): number {
    return this.inFlight.size;
  }

  /**
   * Serves request `id` with `work`, under a signal its cancellation aborts. Resolves undefined
   * once that signal has aborted, whatever the work did: a cancelled request gets no answer
   * (MCP's rule). An id already in flight is refused with -32600 before any work starts: a
   * cancellation naming it could not tell the two apart.
   */
  async run<T extends object>(
    id: RequestId,
    work: (signal: AbortSignal) => T | Promise<T>,
  ): Promise<T | undefined> {
    if (this.inFlight.has(id))
      throw new WireError(WIRE.INVALID_REQUEST, `Request id ${id} is already in use`);
    const ac = new AbortController();
    this.inFlight.set(id, ac);
    try {
      const result = await work(ac.signal);
      return ac.signal.aborted ? undefined : result;
    } catch (err) {
      if (ac.signal.aborted) return undefined;
      throw err;
    } finally {
      if (this.inFlight.get(id) === ac) this.inFlight.delete(id);
    }
  }

  /** Aborts the request `id` names, if it is still being served; false otherwise. */
  cancel(id: RequestId, reason?: unknown): boolean {
    const ac = this.inFlight.get(id);
    if (!ac) return false;
    ac.abort(reason);
    return true;
  }

  /** Aborts every request being served with `reason`. */
  close(reason: Error): void {
    const all = [...this.inFlight.values()];
    this.inFlight.clear();
    for (const ac of all) ac.abort(reason);
  }
}
