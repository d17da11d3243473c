// The `tracing` section: OpenTelemetry traces of every call, exported over OTLP/HTTP; off unless enabled.
import { z } from 'zod';

export const TracingSection = z
  .object({
    enabled: z
      .boolean()
      .default(false)
      .describe(
        'Export a trace span per call, per pipeline stage and per backend request over OTLP/HTTP. Off: no OpenTelemetry code is loaded (a traceparent a host sends is still forwarded to the backend untouched).',
      ),
    endpoint: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe(
        'The OTLP/HTTP traces URL (e.g. http://localhost:4318/v1/traces). Unset: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else http://localhost:4318/v1/traces.',
      ),
    headers: z
      .record(z.string(), z.string())
      .default({})
      .describe(
        'HTTP headers sent with every export (e.g. an API key: use ${VAR}); added to those of OTEL_EXPORTER_OTLP_HEADERS, winning on the same name.',
      ),
    serviceName: z
      .string()
      .min(1)
      .optional()
      .describe('service.name of the spans. Unset: OTEL_SERVICE_NAME, else switchboard.'),
    sampleRatio: z
      .number()
      .min(0)
      .max(1)
      .default(1)
      .describe(
        'Share of new traces recorded (0 to 1). A call that continues a host’s or backend’s trace follows that trace’s sampled flag instead.',
      ),
    stageSpanMinMs: z
      .number()
      .min(0)
      .default(0.1)
      .describe(
        'A pipeline stage gets a span of its own only when it took at least this long itself (ms, the stages inside it and the backend requests it waited for not counted): the stages that did work. 0: every stage the call passed.',
      ),
  })
  .strict()
  .prefault({});

export type TracingConfig = z.output<typeof TracingSection>;
