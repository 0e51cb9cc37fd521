/**
 * Exact sign-flip p for m = 10, 20, 100 and 1000 deltas on a 1/16 grid (deltas = 100·k/16, k a
 * seeded integer in [−16, 16]). Targets from issue 2: m = 10 under 1 ms, m = 1000 under 100 ms.
 * Naive enumeration of all 2^m sign assignments is measured in the same run where feasible
 * (m = 10 and 20) as the baseline.
 */
import { createSeededRandom, signFlipTest } from "../src/stats/index.js";
import { type Benchmark, type BenchmarkRow, measure, row } from "./harness.js";

function gridDeltas(m: number, seed: number): number[] {
  const random = createSeededRandom(seed);
  return Array.from({ length: m }, () => (100 * (random.nextBelow(33) - 16)) / 16);
}

/** The obvious algorithm: every sign assignment, every sum from scratch. */
function naiveP(deltas: readonly number[]): number {
  const m = deltas.length;
  const magnitudes = deltas.map(Math.abs);
  const observed = Math.abs(deltas.reduce((sum, value) => sum + value, 0));
  const tolerance = 1e-9 * magnitudes.reduce((sum, value) => sum + value, 0);
  let extreme = 0;
  for (let mask = 0; mask < 2 ** m; mask++) {
    let sum = 0;
    for (let index = 0; index < m; index++) {
      sum += (mask >> index) & 1 ? (magnitudes[index] as number) : -(magnitudes[index] as number);
    }
    if (Math.abs(sum) >= observed - tolerance) extreme++;
  }
  return extreme / 2 ** m;
}

const targets: Record<number, number> = { 10: 1, 1000: 100 };

const benchmark: Benchmark = {
  name: "stats",
  async run(): Promise<BenchmarkRow[]> {
    const rows: BenchmarkRow[] = [];
    for (const m of [10, 20, 100, 1000]) {
      const deltas = gridDeltas(m, 2026 + m);
      const result = signFlipTest(deltas);
      const fast = await measure(() => signFlipTest(deltas), {
        iterations: m >= 1000 ? 15 : 30,
        warmup: 3,
        batch: m <= 20 ? 20 : 1,
      });
      let baseline: Awaited<ReturnType<typeof measure>> | undefined;
      let agreement = "";
      if (m <= 20) {
        const reference = naiveP(deltas);
        agreement = `, |p − naive| = ${Math.abs(reference - result.p).toExponential(1)}`;
        baseline = await measure(() => naiveP(deltas), {
          iterations: m <= 10 ? 30 : 5,
          warmup: 1,
        });
      }
      const targetMs = targets[m];
      rows.push(
        row(`sign-flip m=${m}`, fast, {
          ...(baseline === undefined ? {} : { baseline }),
          ...(targetMs === undefined ? {} : { targetMs }),
          note: `method ${result.method}, p = ${result.p.toPrecision(6)}${agreement}`,
        }),
      );
    }
    // The grid method on the enumeration cases, for comparison with the auto choice above.
    for (const m of [20]) {
      const deltas = gridDeltas(m, 2026 + m);
      const dp = await measure(() => signFlipTest(deltas, { method: "dp" }), {
        iterations: 30,
        batch: 20,
      });
      const difference = Math.abs(
        signFlipTest(deltas, { method: "dp" }).p - signFlipTest(deltas, { method: "exact" }).p,
      );
      rows.push(
        row(`sign-flip m=${m} forced dp`, dp, {
          note: `|p(dp) − p(enumeration)| = ${difference.toExponential(1)}`,
        }),
      );
    }
    // The Monte Carlo fallback's cost, for deltas with no grid (100 000 draws).
    const irregular = gridDeltas(1000, 7).map(
      (value, index) => value * (index % 2 ? Math.SQRT2 : 1),
    );
    const monteCarlo = await measure(() => signFlipTest(irregular), { iterations: 3, warmup: 1 });
    rows.push(
      row("sign-flip m=1000 off-grid", monteCarlo, { note: "method monte-carlo, 100 000 draws" }),
    );
    return rows;
  },
};

export default benchmark;
