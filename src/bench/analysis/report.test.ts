import { describe, expect, it } from "vitest";
import { runResult, verifierRecord } from "../../../test/support/results.js";
import type { RunResult } from "../store/results.js";
import { renderReportText } from "./render.js";
import { buildReport } from "./report.js";

/** A skill whose requirement k has pass ratios (without, with) = pairs[k]. */
function skillRuns(config: string, skill: string, pairs: Array<[number, number]>): RunResult[] {
  return pairs.flatMap(([without, assisted], index) => [
    runResult(config, skill, `q${index + 1}`, "without", without),
    runResult(config, skill, `q${index + 1}`, "with", assisted),
  ]);
}

describe("buildReport", () => {
  it("averages repeats before taking the delta", () => {
    const runs = [
      runResult("c", "s", "q1", "without", 0.5, { repeat: 1 }),
      runResult("c", "s", "q1", "without", 0, { repeat: 2 }),
      runResult("c", "s", "q1", "with", 1, { repeat: 1 }),
      runResult("c", "s", "q1", "with", 0.5, { repeat: 2 }),
    ];
    const report = buildReport(runs);
    // y0 = 0.25, y1 = 0.75 → d = 50.
    expect(report.profiles[0]?.requirements[0]).toMatchObject({
      without: 0.25,
      with: 0.75,
      delta: 50,
    });
    expect(report.profiles[0]?.requirements[0]?.runs.with).toEqual([
      "c/s/q1/with#1",
      "c/s/q1/with#2",
    ]);
  });

  it("re-classifies without timeout pairs and says when that disagrees", () => {
    // Deltas: 6 × +50 and one timeout pair at −100, Δ = 200/7;
    // without the timeout: six positive deltas, p = 2/64 = 0.03125 → golden.
    const pairs: Array<[number, number]> = [
      [0, 0.5],
      [0, 0.5],
      [0, 0.5],
      [0, 0.5],
      [0, 0.5],
      [0, 0.5],
    ];
    const runs = [
      ...skillRuns("c", "s", pairs),
      runResult("c", "s", "q7", "without", 1),
      runResult("c", "s", "q7", "with", 0, { status: "timeout", flags: ["agent-timeout"] }),
    ];
    const profile = buildReport(runs).profiles[0];
    // Observed sum 300 − 100 = 200. With j of the six fifties positive and the hundred's sign s,
    // sum = 50·(2j − 6) + 100·s; |sum| ≥ 200 for: j=0 both signs (1·2), j=1 s=− (6), j=2 s=− (15),
    // j=4 s=+ (15), j=5 s=+ (6), j=6 both (1·2) → 46 of 2⁷ = 128.
    expect(profile?.p).toBeCloseTo(46 / 128, 12);
    expect(profile?.class).toBe("ineffective");
    expect(profile?.sensitivity.withoutTimeouts).toMatchObject({
      n: 6,
      delta: 50,
      class: "golden",
    });
    expect(profile?.sensitivity.withoutTimeouts.p).toBeCloseTo(2 / 64, 12);
    expect(profile?.sensitivity.disagreements).toContain("sign-flip without timeouts");
  });

  it("correlates skill deltas between configurations and counts sign changes", () => {
    // Skill deltas (one requirement each): a: +50/+50, b: 0/−50, c: −50/+100... chosen by hand.
    const runs = [
      ...skillRuns("x", "a", [[0, 0.5]]),
      ...skillRuns("y", "a", [[0, 0.5]]),
      ...skillRuns("x", "b", [[0.5, 0.5]]),
      ...skillRuns("y", "b", [[0.5, 0]]),
      ...skillRuns("x", "c", [[0.5, 0]]),
      ...skillRuns("y", "c", [[0, 1]]),
    ];
    const report = buildReport(runs);
    // x = [50, 0, −50], y = [50, −50, 100]: means 0 and 100/3.
    // Pearson: Σ(x−x̄)(y−ȳ) = 50·(50/3) + 0 + (−50)·(200/3) = −7500/3·… computed below.
    const x = [50, 0, -50];
    const y = [50, -50, 100];
    const meanY = 100 / 3;
    const covariance = x.reduce(
      (sum, value, index) => sum + value * ((y[index] as number) - meanY),
      0,
    );
    const sx = Math.sqrt(x.reduce((sum, value) => sum + value * value, 0));
    const sy = Math.sqrt(y.reduce((sum, value) => sum + (value - meanY) ** 2, 0));
    expect(report.correlations).toHaveLength(1);
    expect(report.correlations[0]?.pearson).toBeCloseTo(covariance / (sx * sy), 12);
    // Ranks x: [3, 2, 1], y: [2, 1, 3] → Spearman = 1 − 6·(1+1+4)/(3·8) = −0.5.
    expect(report.correlations[0]?.spearman).toBeCloseTo(-0.5, 12);
    // c flips from −50 to +100; b goes 0 → −50 (not a change of sign).
    expect(report.signChanges).toEqual([
      { configs: ["x", "y"], compared: 3, count: 1, skills: ["c"] },
    ]);
    expect(report.pooled.pairs).toBe(6);
  });

  it("flags required files missing only in the assisted arm and a never-activated skill", () => {
    const runs = [
      runResult("c", "s", "q1", "without", 1, { requiredFiles: { "a.py": true } }),
      runResult("c", "s", "q1", "with", 0, {
        requiredFiles: { "a.py": false },
        skillActivated: false,
      }),
      runResult("c", "s", "q2", "without", 0, { requiredFiles: { "b.py": false } }),
      runResult("c", "s", "q2", "with", 0, {
        requiredFiles: { "b.py": false },
        skillActivated: false,
      }),
    ];
    const report = buildReport(runs);
    expect(report.pairs.misplacedDeliverables.keys).toEqual([
      { config: "c", skill: "s", requirement: "q1", missing: ["a.py"], deltaY: -1 },
    ]);
    expect(report.profiles[0]?.activation_rate).toBe(0);
    const text = renderReportText(report).join("\n");
    expect(text).toContain("never activated the skill");
    expect(text).toContain("c/s/q1: a.py");
  });

  it("says why a flagged run has no verifier exit code instead of printing an empty one", () => {
    const unmeasured = (
      requirement: string,
      flags: string[],
      verifier: ReturnType<typeof verifierRecord>,
    ) =>
      (["without", "with"] as const).map((arm) =>
        runResult("c", "s", requirement, arm, 0, { flags, verifier }),
      );
    const report = buildReport([
      ...unmeasured(
        "env",
        ["environment-failure"],
        verifierRecord("pip failed", { exitCode: null, source: "setup", evidence: ["pip"] }),
      ),
      ...unmeasured(
        "broken",
        ["broken-verifier"],
        verifierRecord("ImportError", { exitCode: 2, source: "check", evidence: ["import"] }),
      ),
      ...unmeasured("slow", ["timeout"], verifierRecord("", { exitCode: null })),
      ...unmeasured("oom", ["oom"], verifierRecord("", { exitCode: null })),
      ...unmeasured("failed", ["collection-error"], verifierRecord("E", { exitCode: 4 })),
    ]);
    const text = renderReportText(report).join("\n");
    expect(text).not.toContain("exit none");
    expect(text).toContain("(verifier not run: the environment could not be prepared)");
    expect(text).toContain(
      "(verifier not run: bench check found it broken (exit 2 on the untouched repository))",
    );
    expect(text).toContain("(verifier killed at its time limit)");
    expect(text).toContain("(verifier killed at its memory limit)");
    expect(text).toContain("(verifier exit 4)");
  });
});
