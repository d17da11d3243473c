// Follows a JetStream KV bucket: the last value of every key under a filter, then every change as it
// is written, in revision order, with a signal once the values there at the start have all arrived
// (the consumer's own count of them, so an empty bucket is ready at once).
import type { Bucket, KV } from '@nats-io/kv';

export interface Followed {
  /** The key as stored (before any decoding of the caller's own). */
  key: string;
  op: 'PUT' | 'DEL' | 'PURGE';
  revision: number;
  data: Uint8Array;
  /** Server time of the write. */
  at: number;
}

export interface Following {
  /** Resolves once the values present when following began have been applied. */
  ready: Promise<void>;
  stop(): void;
}

/**
 * `failed` hears a write `apply` could not take (a value no node of this release writes): it is
 * skipped, and the following goes on, since a throw out of the consumer's callback would end it.
 */
export async function followBucket(
  kv: KV,
  filter: string,
  apply: (e: Followed) => void,
  failed: (err: unknown, key: string) => void,
): Promise<Following> {
  const b = kv as Bucket;
  // Last value per key, then new writes: what KV's own watch asks for, with its count kept here.
  const cc = b._buildCC(filter, '');
  const consumer = await b.js.consumers.getPushConsumer(b.stream, cc);
  const info = await consumer.info(true);
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  let left = info.num_pending;
  if (left === 0) markReady();
  const prefixLen = b.prefixLen;
  const messages = await consumer.consume({
    callback: (m) => {
      const op = (m.headers?.get('KV-Operation') || 'PUT') as Followed['op'];
      const key = m.subject.substring(prefixLen);
      try {
        apply({
          key: b.decodeKey(key),
          op,
          revision: m.seq,
          data: m.data,
          at: m.info.timestampNanos ? Math.floor(m.info.timestampNanos / 1e6) : Date.now(),
        });
      } catch (err) {
        failed(err, key);
      } finally {
        if (left > 0 && (--left === 0 || m.info.pending === 0)) {
          left = 0;
          markReady();
        }
      }
    },
  });
  return { ready, stop: () => void messages.stop() };
}
