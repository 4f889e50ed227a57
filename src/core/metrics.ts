// Prometheus text exposition (format 0.0.4), hand-written. Every label set is fixed when the
// metric is declared: recording is an index into a preallocated Float64Array (no label hashing,
// no string building per event), and the label values can only ever be the declared ones, so no
// path, address, email or title can become a label (bounded cardinality by construction).
// Why not prom-client: see docs/decisions.md ("Operations: metrics exposition").

type Labels = readonly (readonly [string, readonly string[]])[];

/** Escapes a label value (the declared values are ours, but a help text or value may hold quotes). */
const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

/** Every combination of the declared label values, as `{a="x",b="y"}` strings, in index order. */
function labelStrings(labels: Labels): string[] {
  let out = [""];
  for (const [name, values] of labels) {
    const next: string[] = [];
    for (const prefix of out) for (const v of values) next.push(`${prefix}${prefix ? "," : ""}${name}="${escapeLabel(v)}"`);
    out = next;
  }
  return out;
}

const fmt = (n: number) => (Number.isFinite(n) ? String(n) : n > 0 ? "+Inf" : n < 0 ? "-Inf" : "NaN");

export interface Metric {
  render(out: string[]): void;
}

/** Counters and histograms only grow, so the same metric of several processes can be summed. */
export interface Cumulative extends Metric {
  readonly name: string;
  /** The arrays that hold the values (same layout in every process declaring the metric). */
  cumulative(): Float64Array[];
}

const isCumulative = (m: Metric): m is Cumulative => typeof (m as Partial<Cumulative>).cumulative === "function";

abstract class Base implements Metric {
  protected readonly keys: string[];
  /** Strides to turn per-label indexes into one slot. */
  private readonly strides: number[];
  constructor(
    readonly name: string,
    readonly help: string,
    protected readonly labels: Labels,
  ) {
    this.keys = labelStrings(labels);
    this.strides = [];
    let s = 1;
    for (let i = labels.length - 1; i >= 0; i--) {
      this.strides[i] = s;
      s *= labels[i]![1].length;
    }
  }
  /** The slot of a label combination given as value indexes (same order as declared). */
  slot(...indexes: number[]): number {
    let slot = 0;
    for (let i = 0; i < indexes.length; i++) slot += indexes[i]! * this.strides[i]!;
    return slot;
  }
  /** The slot of a label combination given as values; -1 when a value was not declared. */
  slotOf(...values: string[]): number {
    const idx: number[] = [];
    for (let i = 0; i < values.length; i++) {
      const j = this.labels[i]![1].indexOf(values[i]!);
      if (j < 0) return -1;
      idx.push(j);
    }
    return this.slot(...idx);
  }
  protected head(out: string[], type: string): void {
    out.push(`# HELP ${this.name} ${this.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`, `# TYPE ${this.name} ${type}`);
  }
  abstract render(out: string[]): void;
}

export class Counter extends Base {
  readonly values: Float64Array;
  /**
   * Sparse: label sets still at zero are left out of a scrape (the HTTP counter's cross product
   * is a few hundred series, most of which never move).
   */
  constructor(
    name: string,
    help: string,
    labels: Labels = [],
    private readonly sparse = false,
  ) {
    super(name, help, labels);
    this.values = new Float64Array(this.keys.length);
  }
  inc(slot = 0, by = 1): void {
    this.values[slot]! += by;
  }
  cumulative(): Float64Array[] {
    return [this.values];
  }
  render(out: string[]): void {
    this.head(out, "counter");
    for (let i = 0; i < this.keys.length; i++) {
      if (this.sparse && this.values[i] === 0) continue;
      out.push(`${this.name}${this.keys[i] ? `{${this.keys[i]}}` : ""} ${fmt(this.values[i]!)}`);
    }
  }
}

/** A gauge whose values are set when scraped (or whenever they change). */
export class Gauge extends Base {
  readonly values: Float64Array;
  constructor(name: string, help: string, labels: Labels = []) {
    super(name, help, labels);
    this.values = new Float64Array(this.keys.length);
  }
  set(slot: number, value: number): void {
    this.values[slot] = value;
  }
  render(out: string[]): void {
    this.head(out, "gauge");
    for (let i = 0; i < this.keys.length; i++) out.push(`${this.name}${this.keys[i] ? `{${this.keys[i]}}` : ""} ${fmt(this.values[i]!)}`);
  }
}

export class Histogram extends Base {
  /** Per slot: bucket counts (non-cumulative, one extra for +Inf), then sum at the end. */
  private readonly counts: Float64Array;
  private readonly sums: Float64Array;
  private readonly width: number;
  constructor(
    name: string,
    help: string,
    labels: Labels,
    readonly bounds: readonly number[],
  ) {
    super(name, help, labels);
    this.width = bounds.length + 1;
    this.counts = new Float64Array(this.keys.length * this.width);
    this.sums = new Float64Array(this.keys.length);
  }
  observe(slot: number, value: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && value > b[i]!) i++;
    this.counts[slot * this.width + i]! += 1;
    this.sums[slot]! += value;
  }
  cumulative(): Float64Array[] {
    return [this.counts, this.sums];
  }
  render(out: string[]): void {
    this.head(out, "histogram");
    for (let s = 0; s < this.keys.length; s++) {
      let total = 0;
      for (let i = 0; i < this.width; i++) total += this.counts[s * this.width + i]!;
      // Label sets never observed are left out: a scrape of the full cross product would be mostly zeros.
      if (total === 0) continue;
      const k = this.keys[s]!;
      const sep = k ? `${k},` : "";
      let cumulative = 0;
      for (let i = 0; i < this.width; i++) {
        cumulative += this.counts[s * this.width + i]!;
        const le = i < this.bounds.length ? fmt(this.bounds[i]!) : "+Inf";
        out.push(`${this.name}_bucket{${sep}le="${le}"} ${cumulative}`);
      }
      out.push(`${this.name}_sum${k ? `{${k}}` : ""} ${fmt(this.sums[s]!)}`, `${this.name}_count${k ? `{${k}}` : ""} ${total}`);
    }
  }
}

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export function renderMetrics(metrics: Iterable<Metric>): string {
  const out: string[] = [];
  for (const m of metrics) m.render(out);
  return out.join("\n") + "\n";
}

/**
 * What grew since the last `take()`, per metric name and array: `[index, delta]` pairs, only
 * the slots that moved (a serving worker sends these to the primary, which adds them to its
 * own: docs/deployment.md "Serving on every core").
 */
export type MetricDeltas = Record<string, [number, number][][]>;

export class DeltaReader {
  private readonly sources: Cumulative[];
  private readonly sent: Float64Array[][];
  constructor(metrics: Iterable<Metric>) {
    this.sources = [...metrics].filter(isCumulative);
    this.sent = this.sources.map((m) => m.cumulative().map((a) => new Float64Array(a.length)));
  }
  /** The growth since the previous call; null when nothing moved. */
  take(): MetricDeltas | null {
    let out: MetricDeltas | null = null;
    this.sources.forEach((m, mi) => {
      const arrays = m.cumulative();
      let perArray: [number, number][][] | null = null;
      arrays.forEach((now, ai) => {
        const before = this.sent[mi]![ai]!;
        for (let i = 0; i < now.length; i++) {
          const d = now[i]! - before[i]!;
          if (d === 0) continue;
          before[i] = now[i]!;
          perArray ??= arrays.map(() => []);
          perArray[ai]!.push([i, d]);
        }
      });
      if (perArray) (out ??= {})[m.name] = perArray;
    });
    return out;
  }
}

/** Adds another process's deltas to these metrics; names, arrays or slots not declared here are skipped. */
export function addDeltas(metrics: Iterable<Metric>, deltas: MetricDeltas): void {
  for (const m of metrics) {
    if (!isCumulative(m)) continue;
    const d = deltas[m.name];
    if (!Array.isArray(d)) continue;
    const arrays = m.cumulative();
    d.forEach((pairs, ai) => {
      const target = arrays[ai];
      if (!target || !Array.isArray(pairs)) return;
      for (const pair of pairs) {
        const [i, by] = pair;
        if (Number.isInteger(i) && i >= 0 && i < target.length && Number.isFinite(by)) target[i]! += by;
      }
    });
  }
}
