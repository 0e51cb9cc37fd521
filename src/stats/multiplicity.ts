import { InputError } from "../core/errors.js";
import { requireOpenUnitInterval } from "./input.js";

/**
 * Benjamini–Hochberg adjusted p-values ("q-values" in the report): with the m p-values sorted
 * ascending, p₍₁₎ ≤ … ≤ p₍ₘ₎,
 *
 *   q₍ᵢ₎ = min over j ≥ i of min(1, m·p₍ⱼ₎ / j),
 *
 * returned in the input's order. Calling every test with q < α a discovery is the BH step-up
 * procedure at level α: the expected share of false discoveries among the discoveries (the false
 * discovery rate) is at most (m₀/m)·α ≤ α, where m₀ is the number of true null hypotheses, when
 * the tests are independent or positively dependent (PRDS; Benjamini & Yekutieli 2001). Discrete
 * p-values that are valid (P(p ≤ t) ≤ t under the null, as the exact sign-flip p is) keep the
 * guarantee; the procedure is then conservative.
 */
export function benjaminiHochberg(pValues: readonly number[]): number[] {
  if (!Array.isArray(pValues)) {
    throw new InputError("stats.not-an-array", "expected an array of p-values", {
      field: "pValues",
    });
  }
  pValues.forEach((p, index) => {
    if (typeof p !== "number" || !(p >= 0 && p <= 1)) {
      throw new InputError(
        "stats.out-of-range",
        `item ${index} is ${String(p)}; expected a p-value in [0, 1]`,
        { field: "pValues" },
        { data: { index } },
      );
    }
  });
  const m = pValues.length;
  const order = pValues
    .map((p, index) => ({ p, index }))
    .sort((left, right) => left.p - right.p || left.index - right.index);
  const q = new Array<number>(m).fill(1);
  let running = 1;
  for (let rank = m; rank >= 1; rank -= 1) {
    const item = order[rank - 1] as { p: number; index: number };
    running = Math.min(running, (m * item.p) / rank);
    q[item.index] = Math.min(1, running);
  }
  return q;
}

/** How many of `pValues` fall below `alpha` (strictly, as the protocol's classes do). */
export function countBelow(pValues: readonly number[], alpha: number): number {
  const level = requireOpenUnitInterval(alpha, "alpha");
  return pValues.filter((p) => p < level).length;
}
