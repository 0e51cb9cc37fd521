import { describe, expect, it } from "vitest";
import { flagDefinition, flagsForceZero, pairMeasurement } from "./flags.js";

describe("run flags", () => {
  it("counts a pair whose verifier failed in one arm only: the other arm shows the verifier works", () => {
    expect(pairMeasurement([], ["collection-error"])).toEqual({ measurable: true });
    expect(pairMeasurement(["no-checks"], [])).toEqual({ measurable: true });
  });

  it("leaves a pair out when the verifier failed in both arms, and says why", () => {
    const measurement = pairMeasurement(["collection-error"], ["no-checks"]);
    expect(measurement.measurable).toBe(false);
    if (!measurement.measurable) {
      expect(measurement.reason).toMatch(/both arms/);
      expect([...measurement.flags].sort()).toEqual(["collection-error", "no-checks"]);
    }
  });

  it("leaves a pair out when either arm could not be measured at all", () => {
    expect(pairMeasurement(["environment-failure"], []).measurable).toBe(false);
    expect(pairMeasurement([], ["broken-verifier"]).measurable).toBe(false);
  });

  it("counts limits and tampering as measured zeros, never as unmeasured", () => {
    for (const flag of ["agent-timeout", "timeout", "oom", "process-limit", "tampered"]) {
      expect(pairMeasurement([], [flag])).toEqual({ measurable: true });
      expect(pairMeasurement([flag], [flag])).toEqual({ measurable: true });
      expect(flagsForceZero([flag])).toBe(true);
    }
    expect(flagsForceZero(["weak-verifier", "reward-file"])).toBe(false);
  });

  it("treats a flag it does not know as unmeasured", () => {
    expect(flagDefinition("from-the-future").effect).toBe("unmeasured");
    expect(pairMeasurement([], ["from-the-future"]).measurable).toBe(false);
  });
});
