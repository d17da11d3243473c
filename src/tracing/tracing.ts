// Starts OpenTelemetry tracing when `tracing.enabled` is set: a tracer provider with an OTLP/HTTP
// exporter behind a batch processor, subscribed to the pipeline's events. Loaded by a dynamic
// import from switchboard.ts, so with tracing off no OpenTelemetry code is ever loaded.
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { TracingConfig } from '../config/tracing-schema.js';
import type { Logger } from '../log.js';
import { traceCalls } from './call-tracer.js';
import { otlpSettings } from './otlp-settings.js';
import { quietExporter } from './quiet-exporter.js';
import { redactingExporter, type SpanText } from './redacting-exporter.js';

export interface Tracing {
  /** Where spans go. */
  readonly url: string;
  /** Stops tracing calls and sends the spans still waiting, giving up after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<void>;
}

export interface TracingOptions {
  log: Logger;
  env?: NodeJS.ProcessEnv | undefined;
  /** Reported as service.version. */
  version?: string | undefined;
  /** How long a batch may wait before it is sent (default 5 s, the SDK's). */
  scheduledDelayMs?: number | undefined;
  /** Takes secrets out of every span's text before it is exported (see redacting-exporter.ts). */
  redactor?: SpanText | undefined;
}

export function startTracing(config: TracingConfig, options: TracingOptions): Tracing {
  const settings = otlpSettings(config, options.env ?? process.env);
  const exporter = new OTLPTraceExporter({ url: settings.url, headers: settings.headers });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: settings.serviceName,
      ...(options.version && { [ATTR_SERVICE_VERSION]: options.version }),
    }),
    // A call continuing a sampled trace is recorded, one continuing an unsampled one is not;
    // a new trace is recorded at sampleRatio.
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: redactingExporter(
          quietExporter(exporter, options.log, settings.url),
          options.redactor ?? { active: false, text: (s) => s },
        ),
        scheduledDelayMillis: options.scheduledDelayMs ?? 5000,
        // The SDK's defaults, said here: a batch of at most 512 spans, at most 2048 waiting (later
        // ones are dropped, never a call slowed), an export given up after 30 s.
        maxExportBatchSize: 512,
        maxQueueSize: 2048,
        exportTimeoutMillis: 30_000,
      }),
    ],
  });
  const stopCalls = traceCalls(
    provider.getTracer('switchboard', options.version),
    options.log,
    config.stageSpanMinMs,
  );
  options.log.info(
    { url: settings.url, serviceName: settings.serviceName, sampleRatio: config.sampleRatio },
    'tracing: exporting spans over OTLP/HTTP',
  );
  let stopping: Promise<void> | undefined;
  return {
    url: settings.url,
    stop: (timeoutMs = 5000) =>
      (stopping ??= (async () => {
        stopCalls();
        // A collector that is down must not hold the stop longer than this.
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>(
          (resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs).unref()),
        );
        const outcome = await Promise.race([provider.shutdown().catch(() => {}), late]);
        clearTimeout(timer);
        if (outcome === 'late')
          options.log.warn(
            { url: settings.url, timeoutMs },
            `tracing: spans still unsent ${timeoutMs} ms into the stop are dropped (is the collector at ${settings.url} reachable?)`,
          );
      })()),
  };
}
