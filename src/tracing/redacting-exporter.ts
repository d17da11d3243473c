// An exporter that hands spans on with every vault secret, live bridge token and configured
// pattern taken out of their text: names, attribute values, status messages, events and links.
// A span is made of what callers and backends said (a method a backend chose, a tool name, a
// request id, a backend's error message, recorded before the redact stage runs), and the
// collector is one more place bytes go. One door for all of it: whatever a span is given, it
// leaves through here.
import type { Attributes, AttributeValue, Link, SpanStatus } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter, TimedEvent } from '@opentelemetry/sdk-trace';

/** What the exporter cleans text with; `active` false: nothing configured, spans go as they are. */
export interface SpanText {
  readonly active: boolean;
  text(s: string): string;
}

export function redactingExporter(inner: SpanExporter, redactor: SpanText): SpanExporter {
  return {
    export(spans, done) {
      inner.export(redactor.active ? spans.map((s) => cleaned(s, redactor)) : spans, done);
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

/** The span as read through a view whose text is cleaned; everything else is the span's own. */
function cleaned(span: ReadableSpan, r: SpanText): ReadableSpan {
  const name = r.text(span.name);
  const attributes = cleanAttributes(span.attributes, r);
  const status: SpanStatus =
    span.status.message === undefined
      ? span.status
      : { ...span.status, message: r.text(span.status.message) };
  const events: TimedEvent[] = span.events.map((e) => ({
    ...e,
    name: r.text(e.name),
    ...(e.attributes && { attributes: cleanAttributes(e.attributes, r) }),
  }));
  const links: Link[] = span.links.map((l) => ({
    ...l,
    ...(l.attributes && { attributes: cleanAttributes(l.attributes, r) }),
  }));
  const own: Partial<Record<keyof ReadableSpan, unknown>> = { name, attributes, status, events, links };
  return new Proxy(span, {
    get: (target, key, receiver) =>
      Object.hasOwn(own, key)
        ? own[key as keyof ReadableSpan]
        : (Reflect.get(target, key, receiver) as unknown),
  });
}

function cleanAttributes(attributes: Attributes, r: SpanText): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) out[r.text(key)] = cleanValue(value, r);
  return out;
}

function cleanValue(value: AttributeValue | undefined, r: SpanText): AttributeValue | undefined {
  if (typeof value === 'string') return r.text(value);
  if (Array.isArray(value))
    return value.map((v) => (typeof v === 'string' ? r.text(v) : v)) as AttributeValue;
  return value;
}
