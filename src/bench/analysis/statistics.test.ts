import { describe, expect, it } from "vitest";
import { runResult } from "../../../test/support/results.js";
import { pairedBinomialPower } from "../../stats/index.js";
import type { RunResult } from "../store/results.js";
import { renderReportText } from "./render.js";
import { buildReport } from "./report.js";
import { classUnderFdr } from "./statistics.js";

/** One profile: requirement k gets deltas[k] points (+25, 0 or −25) from pass ratios 0.5/0.75. */
function profileRuns(config: string, skill: string, deltas: readonly number[]): RunResult[] {
  return deltas.flatMap((delta, index) => {
    const requirement = `r${index + 1}`;
    const without = delta < 0 ? 0.75 : 0.5;
    const assisted = delta > 0 ? 0.75 : delta < 0 ? 0.5 : without;
    return [
      runResult(config, skill, requirement, "without", without),
      runResult(config, skill, requirement, "with", assisted),
    ];
  });
}

const plus = (count: number) => Array.from({ length: count }, () => 25);
const zeros = (count: number) => Array.from({ length: count }, () => 0);
const balanced = [...plus(5), ...Array.from({ length: 5 }, () => -25)];

/**
 * Seven tested profiles and one unscorable. The p-values follow from counting sign assignments
 * by hand: m′ non-zero deltas of one sign give p = 2/2^m′; five up and five down give p = 1.
 *   a: 10 of +25           p = 2/1024  = 0.001953125
 *   b: 8 of +25, 2 zeros   p = 2/256   = 0.0078125
 *   g: 7 of +25, 3 zeros   p = 2/128   = 0.015625
 *   z: 6 of +25, 4 zeros   p = 2/64    = 0.03125
 *   n1…n3: five up, five down, p = 1
 * BH with m = 7: m·p/rank = 0.013672, 0.027344, 0.036458, 0.054688, 7/5, 7/6, 1 → q = the
 * running minimum from the top: a 0.013672, b 0.027344, g 0.036458, z 0.054688, n 1. So z is
 * Golden by its raw p and Ineffective under FDR control.
 *
 * Exact sizes at α = 0.05 (equal magnitudes: |S| ∝ |2j − m′|, j ~ Binomial(m′, ½)):
 *   m′ = 10: P(|S| = 10) = 2/1024, P(|S| ≥ 8) = 22/1024 = 0.021484375 (next tail 112/1024)
 *   m′ = 8: 2/256 = 0.0078125 (next 18/256);  m′ = 7: 2/128 = 0.015625 (next 16/128);
 *   m′ = 6: 2/64 = 0.03125 (next 14/64).
 * Sum over a, b, g, z, n1, n2, n3: 4·0.021484375 + 0.0078125 + 0.015625 + 0.03125 = 0.140625.
 */
function manySkills(): RunResult[] {
  return [
    ...profileRuns("c", "a", plus(10)),
    ...profileRuns("c", "b", [...plus(8), ...zeros(2)]),
    ...profileRuns("c", "g", [...plus(7), ...zeros(3)]),
    ...profileRuns("c", "z", [...plus(6), ...zeros(4)]),
    ...profileRuns("c", "n1", balanced),
    ...profileRuns("c", "n2", balanced),
    ...profileRuns("c", "n3", balanced),
    // Unscorable: the only requirement's verifier failed to collect in both arms.
    runResult("c", "u", "r1", "without", 0, { flags: ["collection-error"] }),
    runResult("c", "u", "r1", "with", 0, { flags: ["collection-error"] }),
  ];
}

describe("statistics across many skills in the report", () => {
  const report = buildReport(manySkills(), { powerDraws: 300 });
  const bySkill = (skill: string) => report.profiles.find((profile) => profile.skill === skill);

  it("gives the hand-computed BH q-values and FDR classes beside the raw ones", () => {
    const expected: Record<string, [number, number, string, string]> = {
      a: [2 / 1024, (7 * (2 / 1024)) / 1, "golden", "golden"],
      b: [2 / 256, (7 * (2 / 256)) / 2, "golden", "golden"],
      g: [2 / 128, (7 * (2 / 128)) / 3, "golden", "golden"],
      z: [2 / 64, (7 * (2 / 64)) / 4, "golden", "ineffective"],
      n1: [1, 1, "ineffective", "ineffective"],
    };
    for (const [skill, [p, q, raw, fdr]] of Object.entries(expected)) {
      const profile = bySkill(skill);
      expect(profile?.p).toBeCloseTo(p, 12);
      expect(profile?.q).toBeCloseTo(q, 12);
      expect(profile?.class).toBe(raw);
      expect(profile?.classFdr).toBe(fdr);
    }
    expect(bySkill("u")).toMatchObject({ p: null, q: null, classFdr: null, detectable: null });
    expect(report.configs[0]?.classesFdr).toEqual({ golden: 3, harmful: 0, ineffective: 4 });
  });

  it("counts discoveries and the false ones chance alone would give, testing measurable profiles only", () => {
    expect(report.multiplicity).toMatchObject({
      alpha: 0.05,
      method: "benjamini-hochberg",
      tested: 7,
      notTested: [{ config: "c", skill: "u", reason: expect.stringMatching(/nothing measurable/) }],
      discoveries: { raw: 4, fdr: 3 },
      expectedFalseDiscoveries: { bound: 7 * 0.05, exactSizes: 7 },
    });
    expect(report.multiplicity.expectedFalseDiscoveries.globalNull).toBeCloseTo(0.140625, 12);
    const text = renderReportText(report).join("\n");
    expect(text).toMatch(
      /multiple testing: 7 profiles tested at α = 0\.05 \(1 unscorable, not tested\); 4 with p < α, 3 with Benjamini–Hochberg q < α/,
    );
    expect(text).toContain("0.14 profiles would be expected to reach p < α by chance");
    expect(text).toContain("at most m·α = 0.35");
    // The verdict table has the q and FDR columns; z's row reads Golden then Ineffective.
    expect(text).toMatch(
      /c\s+z\s+10\s+50\.0%\s+65\.0%\s+\+15\.0\s+0\.0313\s+Golden\s+0\.0547\s+Ineffective/,
    );
  });

  it("says what each test could detect", () => {
    // z: six non-zero deltas, smallest attainable p 2^(1−6) = 0.03125 < α.
    expect(bySkill("z")?.detectable).toMatchObject({ n: 10, nonZero: 6, minimumP: 0.03125 });
    expect(bySkill("z")?.detectable?.anyEffectDetectable).toBe(true);
    const text = renderReportText(report).join("\n");
    // n1: five +25 and five −25. By Hartigan's rule (src/stats/detectable.test.ts) the lower end
    // is the k-th smallest non-empty subset mean, k = ⌈0.05·2^9 − 1⌉ = 25; the 2^5 − 1 = 31
    // subsets of the −25s alone all have mean −25, so it is −25 (and +25 above, by symmetry).
    expect(bySkill("n1")?.detectable?.interval.lower).toBeCloseTo(-25, 6);
    expect(bySkill("n1")?.detectable?.interval.upper).toBeCloseTo(25, 6);
    expect(text).toContain(
      "detectable: a uniform effect below -25.0 or above +25.0 points is ruled out",
    );
  });

  it("reports the within-requirement spread of repeats and separates it in the design", () => {
    // One skill, two requirements, two repeats per arm. Scores (points):
    //   r1 without 50, 100 (SD 35.355); with 100, 100 (SD 0)
    //   r2 without 0, 0 (SD 0);           with 50, 100 (SD 35.355)
    // Pooled within SD per arm: √((1·1250 + 1·0)/2) = 25 in each arm. Deltas of the means:
    // r1 100 − 75 = +25, r2 75 − 0 = +75; σ of deltas: √((25² + 25²)/1) = 35.355.
    // Within variance of both arms 25² + 25² = 1250, over R = 2 repeats: 625;
    // between SD √(1250 − 625) = 25.
    const runs = [
      runResult("c", "s", "r1", "without", 0.5, { repeat: 1 }),
      runResult("c", "s", "r1", "without", 1, { repeat: 2 }),
      runResult("c", "s", "r1", "with", 1, { repeat: 1 }),
      runResult("c", "s", "r1", "with", 1, { repeat: 2 }),
      runResult("c", "s", "r2", "without", 0, { repeat: 1 }),
      runResult("c", "s", "r2", "without", 0, { repeat: 2 }),
      runResult("c", "s", "r2", "with", 0.5, { repeat: 1 }),
      runResult("c", "s", "r2", "with", 1, { repeat: 2 }),
    ];
    const repeated = buildReport(runs, { powerDraws: 200 });
    const profile = repeated.profiles[0];
    expect(profile?.requirements.map((outcome) => outcome.spread)).toEqual([
      { without: expect.closeTo(Math.sqrt(1250), 9), with: 0 },
      { without: 0, with: expect.closeTo(Math.sqrt(1250), 9) },
    ]);
    expect(profile?.variability).toMatchObject({ repeats: 2 });
    expect(profile?.variability?.without.sd).toBeCloseTo(25, 9);
    expect(profile?.variability?.with.sd).toBeCloseTo(25, 9);
    const design = repeated.configs[0]?.design;
    expect(design?.sd).toBeCloseTo(Math.sqrt(1250), 9);
    expect(design?.df).toBe(1);
    expect(design?.within?.variance).toBeCloseTo(1250, 9);
    expect(design?.within?.betweenSd).toBeCloseTo(25, 9);
    // Rows at 2, 4 and 10 repeats: σ² = 25² + 1250/R.
    expect(design?.rows.map((row) => [row.repeats, row.sd])).toEqual([
      [2, expect.closeTo(Math.sqrt(625 + 625), 9)],
      [4, expect.closeTo(Math.sqrt(625 + 312.5), 9)],
      [10, expect.closeTo(Math.sqrt(625 + 125), 9)],
    ]);
    // More repeats shrink σ, so they never need more requirements.
    const needed = design?.rows.map((row) => row.requirements ?? Number.POSITIVE_INFINITY) ?? [];
    expect(needed[1]).toBeLessThanOrEqual(needed[0] as number);
    expect(needed[2]).toBeLessThanOrEqual(needed[1] as number);
    expect(repeated.statistics).toEqual({
      alpha: 0.05,
      detectEffect: 10,
      targetPower: 0.8,
      powerDraws: 200,
      seed: 1,
    });
    expect(renderReportText(repeated).join("\n")).toContain(
      "within-requirement SD over 2.0 repeats (pooled): without 25.0, with 25.0 points",
    );
  });
});

/** Benjamini–Hochberg as the paper states the step-up rule, written out for the checks below. */
function stepUpQ(pValues: readonly number[]): number[] {
  const m = pValues.length;
  return pValues.map((_, index) => {
    // q_i = min over the p_j ≥ p_i (ties by position) of m·p_j / rank_j, capped at 1.
    const ranked = pValues
      .map((p, position) => ({ p, position }))
      .sort((left, right) => left.p - right.p || left.position - right.position);
    const rank = ranked.findIndex((item) => item.position === index);
    let best = 1;
    for (let j = rank; j < m; j++)
      best = Math.min(best, (m * (ranked[j] as { p: number }).p) / (j + 1));
    return best;
  });
}

describe("one Benjamini–Hochberg family per report (issue 31, item 10)", () => {
  // Skill a gets a variant v2 scoring like its `with` arm: v2 vs none repeats a's p = 2/1024,
  // v2 vs with has only zero deltas (p = 1). The with-vs-none pair *is* a's profile test.
  const variant = profileRuns("c", "a", plus(10))
    .filter((run) => run.arm === "with")
    .map((run) => ({ ...run, arm: "variant:v2" as const }));
  const report = buildReport([...manySkills(), ...variant], { powerDraws: 100 });

  it("corrects profiles and the other arm pairs together, each test once", () => {
    // Hand-counted p-values (see manySkills) plus the two other pairs of a's matrix.
    const profiles = [2 / 1024, 2 / 256, 2 / 128, 2 / 64, 1, 1, 1];
    const family = [...profiles, 2 / 1024, 1];
    const expected = stepUpQ(family);
    expect(report.multiplicity.familySize).toBe(9);
    expect(report.multiplicity.tested).toBe(7);
    const bySkill = (skill: string) => report.profiles.find((profile) => profile.skill === skill);
    ["a", "b", "g", "z"].forEach((skill, index) => {
      expect(bySkill(skill)?.q).toBeCloseTo(expected[index] as number, 12);
    });
    const pairs = report.arms?.[0]?.pairs ?? [];
    const pair = (label: string) => pairs.find((candidate) => candidate.label === label);
    // with vs none takes the profile's q: not a second test of the same deltas.
    expect(pair("skill vs none")?.q).toBe(bySkill("a")?.q);
    expect(pair("v2 vs none")?.q).toBeCloseTo(expected[7] as number, 12);
    expect(pair("v2 vs skill")?.q).toBeCloseTo(expected[8] as number, 12);
    expect(renderReportText(report).join("\n")).toContain(
      "BH over one family of 9 tests: the profiles and 2 other arm pairs",
    );
  });

  it("applies the 1e-12 guard to arm pairs as to profiles", () => {
    // The float just below α: equal to α up to rounding, so not a discovery.
    const justBelow = 0.049999999999999996;
    expect(justBelow).toBeLessThan(0.05);
    expect(classUnderFdr(10, justBelow, 0.05)).toBe("ineffective");
    expect(classUnderFdr(10, 0.0499, 0.05)).toBe("golden");
    expect(classUnderFdr(-10, 0.0499, 0.05)).toBe("harmful");
    for (const pair of report.arms?.[0]?.pairs ?? []) {
      if (pair.q === null) continue;
      expect(pair.classFdr).toBe(classUnderFdr(pair.delta, pair.q, 0.05));
    }
  });
});

describe("Ineffective is defined in every report (issue 31, item 8)", () => {
  const report = buildReport(manySkills(), { powerDraws: 100 });
  const definition = "no effect detected at α with these requirements";

  it("in the JSON and the text", () => {
    expect(JSON.stringify(report)).toContain(definition);
    expect(renderReportText(report).join("\n")).toContain(`Ineffective = ${definition}`);
  });
});

describe("the design figure under the paired binomial model (issue 31, item 7)", () => {
  // Ten requirements, 4 checks each, one repeat: unassisted 2/4, assisted 3/4 or 2/4.
  const runs = Array.from({ length: 10 }, (_, index) => {
    const requirement = `r${index + 1}`;
    const assisted = index % 3 === 0 ? 0.5 : 0.75;
    return [
      runResult("c", "s", requirement, "without", 0.5, { passed: 2, total: 4 }),
      runResult("c", "s", requirement, "with", assisted, { passed: 4 * assisted, total: 4 }),
    ];
  }).flat();
  const report = buildReport(runs, { powerDraws: 100, detectEffect: 25 });
  const design = report.configs[0]?.design;

  it("uses checks × repeats per arm and the unassisted pass ratios, and reaches the target", () => {
    expect(design?.passRatio).toMatchObject({ trials: 4, draws: 1000, seed: 1 });
    const needed = design?.passRatio?.requirements as number;
    expect(needed).toBeGreaterThan(5);
    // Re-estimated with other draws, the found m has power near the target and m − 2 below it.
    const at = (m: number) =>
      pairedBinomialPower(
        { requirements: m, effect: 25, baseline: [0.5], trials: 4 },
        { draws: 20_000, seed: 99 },
      ).power;
    expect(at(needed)).toBeGreaterThan(0.77);
    expect(at(needed - 2)).toBeLessThan(0.8);
    expect(renderReportText(report).join("\n")).toContain("pass-ratio model (paired binomial");
  });
});
