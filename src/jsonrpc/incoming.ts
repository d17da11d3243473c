// The other side's requests while we serve them: one abort each, which its `notifications/cancelled`
// or the end of the connection aborts, and one request per id at a time. A request may also be cut
// (a stop's deadline): it aborts as for a cancellation, but the other side still gets the answer
// the work ends with. The abort's signal is made only if the work asks for it (lazy-abort.ts).
import { WIRE, WireError } from '../errors/errors.js';
import { InFlightMap } from './in-flight-map.js';
import { LazyAbort } from './lazy-abort.js';
import type { RequestId } from './message.js';

export class IncomingRequests {
  private readonly inFlight = new InFlightMap<RequestId, LazyAbort>();

  /** Requests being served. */
  get size(): number {
    return this.inFlight.size;
  }

  /**
   * Serves request `id` with `work`, under an abort its cancellation aborts. Resolves undefined
   * once that has aborted, whatever the work did: a cancelled request gets no answer
   * (MCP's rule). `cut` aborts the signal too, but the work's outcome is still the answer. An id
   * already in flight is refused with -32600 before any work starts: a cancellation naming it
   * could not tell the two apart.
   */
  async run<T extends object>(
    id: RequestId,
    work: (abort: LazyAbort, cut: (reason: Error) => void) => T | Promise<T>,
  ): Promise<T | undefined> {
    if (this.inFlight.has(id))
      throw new WireError(WIRE.INVALID_REQUEST, `Request id ${id} is already in use`);
    const ac = new LazyAbort();
    this.inFlight.set(id, ac);
    let wasCut = false;
    const cut = (reason: Error) => {
      if (!ac.aborted) wasCut = true;
      ac.abort(reason);
    };
    try {
      const result = await work(ac, cut);
      return ac.aborted && !wasCut ? undefined : result;
    } catch (err) {
      if (ac.aborted && !wasCut) return undefined;
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
    // A copy (InFlightMap's loops go over one), so clearing first loses none.
    const all = this.inFlight.values();
    this.inFlight.clear();
    for (const ac of all) ac.abort(reason);
  }
}
