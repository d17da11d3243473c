// What a legacy session's resumable streams keep for a host to come back for, and the event ids a
// host names on its way back (`Last-Event-ID: <stream>.<seq>`).

/** How much of a stream is kept for resumption, and how hosts are told to come back. */
export interface StreamReplay {
  /** Events kept per stream; older ones are dropped (a resume from before them is refused). */
  maxEvents: number;
  /** Bytes of events kept per stream, counted as written. */
  maxBytes: number;
  /** How long a stream stays resumable once it ended, or once its connection dropped (GET streams). */
  keepMs: number;
  /** Bytes of events all ended streams keep together; past it the first ended are forgotten early. */
  maxEndedBytes: number;
  /** The `retry` (ms) sent with the first event: how long a host waits before it comes back. */
  retryMs: number;
  /** A POST stream still unanswered this long after it opened is closed; the host resumes it. */
  pollAfterMs?: number | undefined;
}

/** An event id: the stream's random id and the event's place in it (`<stream>.<seq>`). */
export function parseEventId(id: string): { stream: string; seq: number } | undefined {
  const m = /^([A-Za-z0-9_-]{22})\.(\d{1,15})$/.exec(id);
  return m ? { stream: m[1]!, seq: Number(m[2]) } : undefined;
}
