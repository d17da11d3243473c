// The small pieces a workflow run is made with: its result and error shapes (each naming the run in
// `_meta`), a cancellable sleep for retry backoff, bounded concurrency for forEach, and whether the
// process that last ran a run is still alive (so a run is resumed only once its owner is gone).
import type { Result } from '../jsonrpc/message.js';

export const RUN_META = 'io.switchboard/workflow-run';

export function resultOf(value: unknown, run: string): Result {
  const meta = { _meta: { [RUN_META]: run } };
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }], ...meta };
  const structured = value !== null && typeof value === 'object' && !Array.isArray(value);
  return {
    content: [{ type: 'text', text: JSON.stringify(value) }],
    ...(structured ? { structuredContent: value } : {}),
    ...meta,
  };
}

export function toolError(text: string, run?: string): Result {
  return { content: [{ type: 'text', text }], isError: true, ...(run ? { _meta: { [RUN_META]: run } } : {}) };
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(new Error('cancelled'));
      },
      { once: true },
    );
  });
}

export async function mapLimit<T, R>(
  items: T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
