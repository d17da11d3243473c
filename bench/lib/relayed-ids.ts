// Ids for the bench's relay processes: a request goes to the echo server under an id of the
// relay's own (as any proxy's must, to tell its callers' ids apart), and its answer goes back with
// the caller's id restored, to whoever waits for it.

export type Message = { id?: string | number; method?: string; [key: string]: unknown };

export class RelayedIds<W> {
  private readonly waiting = new Map<number, { who: W; id: string | number }>();
  private next = 0;

  /** The request with an id of the relay's own, remembered with who waits for its answer. */
  out(request: Message & { id: string | number }, who: W): Message {
    this.waiting.set(++this.next, { who, id: request.id });
    return { ...request, id: this.next };
  }

  /** The answer with its caller's id, and who waits for it; undefined for anything else. */
  back(message: Message): { message: Message; who: W } | undefined {
    if (typeof message.id !== 'number' || message.method !== undefined) return undefined;
    const asked = this.waiting.get(message.id);
    if (asked === undefined) return undefined;
    this.waiting.delete(message.id);
    return { message: { ...message, id: asked.id }, who: asked.who };
  }
}
