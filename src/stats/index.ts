/**
 * The statistics core as the rest of skillsmith uses it: the public surface (`public.ts`, what
 * `skillsmith/stats` exports) plus internals (grid helpers, ranks, special functions). Only the
 * internals are listed here, so the two lists cannot drift apart.
 */

export { quantileOfSorted } from "./bootstrap.js";
export { findGrid, type Grid, gridP } from "./grid.js";
export { countBelow } from "./multiplicity.js";
export * from "./public.js";
export { type MidRanks, midRanks } from "./ranks.js";
export {
  erfc,
  logGamma,
  normalCdf,
  normalTwoSided,
  regularizedIncompleteBeta,
  regularizedUpperGamma,
  studentTCdf,
  studentTTwoSided,
} from "./special.js";
