// Where and as what traces are exported: the `tracing` section, then the standard OTEL_* variables.
import type { TracingConfig } from '../config/tracing-schema.js';

export interface OtlpSettings {
  /** The full OTLP/HTTP traces URL. */
  url: string;
  serviceName: string;
  /** The configured headers only: the exporter adds OTEL_EXPORTER_OTLP_HEADERS itself. */
  headers: Record<string, string>;
}

export const DEFAULT_TRACES_URL = 'http://localhost:4318/v1/traces';

/**
 * Precedence, highest first: `tracing.endpoint`, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as
 * given), OTEL_EXPORTER_OTLP_ENDPOINT (with `/v1/traces` appended, as the OTLP spec says), the
 * default. Service name: `tracing.serviceName`, OTEL_SERVICE_NAME, `switchboard`.
 */
export function otlpSettings(config: TracingConfig, env: NodeJS.ProcessEnv): OtlpSettings {
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const url =
    config.endpoint ??
    nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ??
    (base ? `${base.replace(/\/+$/, '')}/v1/traces` : DEFAULT_TRACES_URL);
  return {
    url,
    serviceName: config.serviceName ?? nonEmpty(env.OTEL_SERVICE_NAME) ?? 'switchboard',
    headers: config.headers,
  };
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}
