import { requireOpenUnitInterval } from "./input.js";

/**
 * The protocol's verdict (A.6), plus "undecided" for a p known only as a bracket that contains α.
 */
export type SkillClass = "golden" | "harmful" | "ineffective" | "undecided";

/**
 * What "Ineffective" means, in the words every report prints beside it: the test did not detect
 * a directional effect at α with the requirements it had — not that the effect is zero.
 */
export const INEFFECTIVE_DEFINITION =
  "Ineffective = no effect detected at α with these requirements (not evidence of no effect)";

/**
 * golden when the mean delta is positive and p < alpha, harmful when it is negative and
 * p < alpha, ineffective otherwise — which means no directional effect was detected, not that
 * the effect is zero. `decided: false` (a "dp-bounds" bracket that still contains alpha, see
 * `signFlipTest`) gives "undecided": the exact p may lie on either side of alpha, so no class.
 */
export function classify(
  result: { readonly delta: number; readonly p: number; readonly decided?: boolean },
  alpha = 0.05,
): SkillClass {
  const level = requireOpenUnitInterval(alpha, "alpha");
  if (result.decided === false && result.delta !== 0) return "undecided";
  if (!(result.p < level)) return "ineffective";
  if (result.delta > 0) return "golden";
  if (result.delta < 0) return "harmful";
  return "ineffective";
}
