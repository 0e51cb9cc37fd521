import { requirePairedSamples } from "./input.js";
import { midRanks } from "./ranks.js";

/**
 * Pearson's product-moment correlation of paired samples.
 *
 * When either sample is constant (including a single pair) the correlation is undefined and the
 * result is NaN, as in SciPy; callers that print it should show "undefined" (JSON has no NaN).
 */
export function pearson(x: readonly number[], y: readonly number[]): number {
  const pairs = requirePairedSamples(x, y);
  return pearsonOfChecked(pairs.x, pairs.y);
}

/**
 * Spearman's rank correlation: Pearson's correlation of the mid-ranks (tied values share the
 * mean of their positions). NaN when either sample is constant.
 */
export function spearman(x: readonly number[], y: readonly number[]): number {
  const pairs = requirePairedSamples(x, y);
  return pearsonOfChecked(Array.from(midRanks(pairs.x).ranks), Array.from(midRanks(pairs.y).ranks));
}

function pearsonOfChecked(x: readonly number[], y: readonly number[]): number {
  const count = x.length;
  const meanX = x.reduce((sum, value) => sum + value, 0) / count;
  const meanY = y.reduce((sum, value) => sum + value, 0) / count;
  let cross = 0;
  let squaresX = 0;
  let squaresY = 0;
  for (let index = 0; index < count; index++) {
    const dx = (x[index] as number) - meanX;
    const dy = (y[index] as number) - meanY;
    cross += dx * dy;
    squaresX += dx * dx;
    squaresY += dy * dy;
  }
  if (squaresX === 0 || squaresY === 0) return Number.NaN;
  // Rounding can push |r| a hair above 1 for perfectly linear data.
  return Math.max(-1, Math.min(1, cross / Math.sqrt(squaresX * squaresY)));
}
