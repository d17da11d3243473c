// Where spans go and under what name: the tracing section first, then the standard OTEL_* variables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TracingSection } from '../../src/config/tracing-schema.js';
import { DEFAULT_TRACES_URL, otlpSettings } from '../../src/tracing/otlp-settings.js';

const on = (extra: Record<string, unknown> = {}) => TracingSection.parse({ enabled: true, ...extra });

test('tracing.endpoint wins over both OTLP variables', () => {
  const env = {
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/v1/traces',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318',
  };
  assert.equal(otlpSettings(on({ endpoint: 'http://mine:9/x' }), env).url, 'http://mine:9/x');
});

test('the traces variable is used as given and wins over the base one, which gets /v1/traces', () => {
  assert.equal(
    otlpSettings(on(), {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318',
    }).url,
    'http://traces:4318/custom',
  );
  assert.equal(
    otlpSettings(on(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318/' }).url,
    'http://base:4318/v1/traces',
  );
  assert.equal(otlpSettings(on(), {}).url, DEFAULT_TRACES_URL);
});

test('service name: tracing.serviceName, then OTEL_SERVICE_NAME, then switchboard', () => {
  assert.equal(otlpSettings(on({ serviceName: 'gw' }), { OTEL_SERVICE_NAME: 'env' }).serviceName, 'gw');
  assert.equal(otlpSettings(on(), { OTEL_SERVICE_NAME: 'env' }).serviceName, 'env');
  assert.equal(otlpSettings(on(), {}).serviceName, 'switchboard');
});

test('tracing is off unless enabled, and a sample ratio outside 0..1 or a non-http endpoint is refused', () => {
  assert.equal(TracingSection.parse(undefined).enabled, false);
  assert.throws(() => TracingSection.parse({ sampleRatio: 1.5 }));
  assert.throws(() => TracingSection.parse({ endpoint: 'file:///etc/passwd' }));
});
