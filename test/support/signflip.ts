/** A reference for tests, written apart from src/stats so the two can disagree. */

/** Exact two-sided sign-flip p by brute force: share of the 2^n sign vectors with |Σ| ≥ |Σ observed|. */
export function signFlipByHand(deltas: readonly number[]): number {
  const observed = Math.abs(deltas.reduce((sum, value) => sum + value, 0));
  let extreme = 0;
  const total = 2 ** deltas.length;
  for (let mask = 0; mask < total; mask += 1) {
    let sum = 0;
    deltas.forEach((value, index) => {
      sum += (mask >> index) & 1 ? -value : value;
    });
    if (Math.abs(sum) >= observed - 1e-9) extreme += 1;
  }
  return extreme / total;
}
