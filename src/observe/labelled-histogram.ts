// A Prometheus histogram with one label, for observations made on every call: each label value's
// series is found once and kept, so observing is a bucket search and three additions. prom-client's
// own Histogram validates and hashes its label object on every observation (about as much work
// as the rest of a call's metrics together); the text exposition is still prom-client's.
import type { Registry } from 'prom-client';

export class HistogramSeries {
  /** Observations per bucket, not cumulative; the last slot is above every bound (+Inf). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

interface Sample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

export interface LabelledHistogramOptions {
  name: string;
  help: string;
  labelName: string;
  /** Upper bounds, ascending. */
  buckets: readonly number[];
  registers: Registry[];
}

export class LabelledHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly labelName: string;
  private readonly buckets: readonly number[];
  private readonly series = new Map<string, HistogramSeries>();

  constructor(options: LabelledHistogramOptions) {
    this.name = options.name;
    this.help = options.help;
    this.labelName = options.labelName;
    this.buckets = [...options.buckets];
    // Registries take any object that answers get(): the same shape prom-client's metrics give.
    for (const registry of options.registers) registry.registerMetric(this as never);
  }

  /** The series of one label value (bounded by the caller): keep it and observe it directly. */
  of(value: string): HistogramSeries {
    let s = this.series.get(value);
    if (!s) this.series.set(value, (s = new HistogramSeries(this.buckets)));
    return s;
  }

  reset(): void {
    this.series.clear();
  }

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const [value, s] of this.series) {
      let cumulative = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += s.counts[i]!;
        values.push({
          metricName: bucketName,
          labels: { le: this.buckets[i]!, [this.labelName]: value },
          value: cumulative,
        });
      }
      values.push({
        metricName: bucketName,
        labels: { le: '+Inf', [this.labelName]: value },
        value: s.count,
      });
      values.push({ metricName: `${this.name}_sum`, labels: { [this.labelName]: value }, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: { [this.labelName]: value }, value: s.count });
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    });
  }
}
