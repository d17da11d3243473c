// An exporter that says when exports fail, once per interval: a collector that is down must not
// flood the log (nor slow a call: spans are exported in batches, off the request path).
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { Logger } from '../log.js';

export function quietExporter(
  inner: SpanExporter,
  log: Logger,
  url: string,
  intervalMs = 60_000,
): SpanExporter {
  let lastWarned = -Infinity;
  let failedSince = 0;
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      inner.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS) {
          failedSince += 1;
          const now = performance.now();
          if (now - lastWarned >= intervalMs) {
            lastWarned = now;
            log.warn(
              { err: result.error, url, failedExports: failedSince },
              `tracing: spans could not be exported to ${url} (said at most once a minute; calls are not affected)`,
            );
            failedSince = 0;
          }
        }
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}
