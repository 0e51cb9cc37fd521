import { requireOpenUnitInterval } from "./input.js";

export type SkillClass = "golden" | "harmful" | "ineffective";

/**
 * The protocol's verdict (A.6): golden when the mean delta is positive and p < alpha, harmful
 * when it is negative and p < alpha, ineffective otherwise — which means no directional effect
 * was detected, not that the effect is zero.
 */
export function classify(
  result: { readonly delta: number; readonly p: number },
  alpha = 0.05,
): SkillClass {
  const level = requireOpenUnitInterval(alpha, "alpha");
  if (!(result.p < level)) return "ineffective";
  if (result.delta > 0) return "golden";
  if (result.delta < 0) return "harmful";
  return "ineffective";
}
