/**
 * The benchmark contract. Every `perf/<name>.bench.ts` default-exports a `Benchmark`;
 * `perf/run.ts` discovers, runs and prints them. See perf/README.md.
 */

/** One measured case of a benchmark: a row of the printed table. */
export interface BenchmarkRow {
  /** What was measured, e.g. "sign-flip m=1000 (dp)". */
  readonly case: string;
  /** Median wall-clock time of one call, in milliseconds. */
  readonly medianMs: number;
  /** Median time of the reference implementation measured in the same run, if any. */
  readonly baselineMs?: number;
  /** baselineMs / medianMs: how many times faster than the baseline (> 1 = faster). */
  readonly ratio?: number;
  /** Human-readable target, e.g. "< 1 ms". */
  readonly target?: string;
  /** Whether the target was met in this run. */
  readonly met?: boolean;
  readonly note?: string;
  /**
   * Why this case did not measure what it claims (e.g. a search that must answer answered
   * nothing): the row prints FAILED and `npm run bench` exits 1, noise or not.
   */
  readonly failed?: string;
}

export interface Benchmark {
  /** Unique, short; `npm run bench -- <filter>` selects benchmarks whose name contains it. */
  readonly name: string;
  run(): Promise<BenchmarkRow[]>;
}

export interface MeasureOptions {
  /** Timed samples. Default 20. */
  readonly iterations?: number;
  /** Untimed calls first, so the JIT has compiled the code being measured. Default 3. */
  readonly warmup?: number;
  /**
   * Calls per timed sample; the sample's time is divided by it. Raise it for calls of a few
   * microseconds, where one call is too short to time reliably. Default 1.
   */
  readonly batch?: number;
}

export interface Measurement {
  readonly medianMs: number;
  readonly minMs: number;
  readonly maxMs: number;
  readonly iterations: number;
}

/** Time `fn` (sync or async) and return the median, minimum and maximum per-call time. */
export async function measure(
  fn: () => unknown,
  options: MeasureOptions = {},
): Promise<Measurement> {
  const iterations = options.iterations ?? 20;
  const warmup = options.warmup ?? 3;
  const batch = options.batch ?? 1;
  if (!(iterations >= 1 && warmup >= 0 && batch >= 1)) {
    throw new RangeError("measure: iterations and batch must be ≥ 1 and warmup ≥ 0");
  }
  // Await only real promises: awaiting a plain value would add a microtask turn to every call,
  // which is more than the whole cost of the calls measured in microseconds.
  const invoke = async (): Promise<void> => {
    const result = fn();
    if (result instanceof Promise) await result;
  };
  // One untimed probe call tells whether fn is asynchronous.
  const probe = fn();
  const isAsync = probe instanceof Promise;
  if (isAsync) await probe;
  for (let index = 0; index < warmup; index++) await invoke();
  const samples: number[] = [];
  for (let index = 0; index < iterations; index++) {
    const start = performance.now();
    if (isAsync) for (let count = 0; count < batch; count++) await invoke();
    else for (let count = 0; count < batch; count++) fn();
    samples.push((performance.now() - start) / batch);
  }
  return summarise(samples);
}

/** The median, minimum and maximum of times measured some other way (at least one). */
export function summarise(times: readonly number[]): Measurement {
  const sorted = [...times].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  const medianMs =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return {
    medianMs,
    minMs: sorted[0] as number,
    maxMs: sorted[sorted.length - 1] as number,
    iterations: sorted.length,
  };
}

/**
 * Build a row comparing a measurement with an optional baseline and a "less than" target.
 * Most benchmarks need only this.
 */
export function row(
  name: string,
  measured: Measurement,
  extra: { baseline?: Measurement; targetMs?: number; note?: string } = {},
): BenchmarkRow {
  return {
    case: name,
    medianMs: measured.medianMs,
    ...(extra.baseline === undefined
      ? {}
      : {
          baselineMs: extra.baseline.medianMs,
          ratio: extra.baseline.medianMs / measured.medianMs,
        }),
    ...(extra.targetMs === undefined
      ? {}
      : { target: `< ${extra.targetMs} ms`, met: measured.medianMs < extra.targetMs }),
    ...(extra.note === undefined ? {} : { note: extra.note }),
  };
}
