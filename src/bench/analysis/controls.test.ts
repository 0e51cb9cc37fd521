import { describe, expect, it } from "vitest";
import { runResult } from "../../../test/support/results.js";
import type { RunManifest } from "../store/manifest.js";
import type { RunResult } from "../store/results.js";
import { completenessOf } from "./load.js";
import { renderReportText, unmeasuredRunsOf } from "./render.js";
import { buildReport } from "./report.js";

/** A manifest naming each configuration's agent: all the report reads of it here. */
function manifestOf(configurations: Record<string, string>, plannedRuns?: Record<string, number>) {
  return {
    suite: { name: "tasks", path: "/suite" },
    configurations: Object.entries(configurations).map(([id, agent]) => ({ id, agent })),
    ...(plannedRuns === undefined ? {} : { plannedRuns }),
  } as unknown as RunManifest;
}

describe("control configurations", () => {
  // The oracle solves t1 and t2, fails t3 (solve.sh exited 1); none scores 0 everywhere.
  const runs: RunResult[] = [
    ...(["without", "with"] as const).flatMap((arm) => [
      runResult("oracle", "t1", "task", arm, 1),
      runResult("oracle", "t2", "task", arm, 1),
      runResult("oracle", "t3", "task", arm, 0, {
        status: "agent_error",
        trajectory: { error: "solve.sh exited with 1" },
      }),
      runResult("none", "t1", "task", arm, 0),
      runResult("none", "t2", "task", arm, 0.5),
      runResult("none", "t3", "task", arm, 0, { flags: ["reward-missing"] }),
    ]),
  ];
  const report = buildReport(runs, { manifest: manifestOf({ oracle: "oracle", none: "none" }) });

  it("gives no skill a verdict and keeps controls out of the BH family", () => {
    expect(report.profiles).toEqual([]);
    expect(report.configs).toEqual([]);
    expect(report.multiplicity.familySize).toBe(0);
    expect(
      report.controls?.map((control) => `${control.config}/${control.skill}:${control.status}`),
    ).toEqual([
      "none/t1:as-expected",
      "none/t2:not-as-expected",
      "none/t3:unmeasured",
      "oracle/t1:as-expected",
      "oracle/t2:as-expected",
      "oracle/t3:unmeasured",
    ]);
  });

  it("says what each control reached and why a failed one measured nothing", () => {
    const find = (config: string, skill: string) =>
      report.controls?.find((control) => control.config === config && control.skill === skill);
    expect(find("oracle", "t1")?.says).toMatch(/oracle reaches 1 as it must/);
    expect(find("oracle", "t3")?.score).toBeNull();
    expect(find("oracle", "t3")?.says).toMatch(/the control agent failed: solve\.sh exited with 1/);
    expect(find("none", "t2")?.says).toMatch(/none reaches 0\.5, not 0/);
    expect(find("none", "t3")?.says).toMatch(/reward missing/);
    const text = renderReportText(report).join("\n");
    expect(text).toMatch(/controls \(agents that read no skill.*\): 3 of 6 as expected/);
    expect(text).toContain("no skill verdicts: controls only");
    expect(text).not.toMatch(/golden|harmful|ineffective/i);
  });

  it("counts every failed or off control run as not measured", () => {
    // t3 of each control (2 runs each) failed, none/t2 (2 runs) missed its 0: 6 of 12 runs.
    expect(unmeasuredRunsOf(report)?.line).toBe(
      "6 of 12 runs could not be measured: control none did not reach 0 (2); control none failed (2); control oracle failed (2)",
    );
  });

  it("still gives a skill-reading agent its verdict beside the controls", () => {
    const mixed = buildReport(
      [
        ...runs,
        runResult("claude", "t1", "task", "without", 0),
        runResult("claude", "t1", "task", "with", 1),
      ],
      { manifest: manifestOf({ oracle: "oracle", none: "none", claude: "claude-code" }) },
    );
    expect(mixed.profiles.map((profile) => profile.config)).toEqual(["claude"]);
    expect(mixed.controls).toHaveLength(6);
  });
});

describe("an agent that failed in both arms", () => {
  it("leaves the pair out of the verdict, in the profile and in the arm matrix", () => {
    const failed = { status: "agent_error" as const };
    const runs = [
      runResult("c", "s", "r1", "without", 0.5, failed),
      runResult("c", "s", "r1", "with", 0.5, failed),
      runResult("c", "s", "r1", "variant:v2", 1),
      runResult("c", "s", "r2", "without", 0),
      runResult("c", "s", "r2", "with", 1, failed),
      runResult("c", "s", "r2", "variant:v2", 1),
    ];
    const report = buildReport(runs);
    const profile = report.profiles[0];
    expect(profile?.measured.unmeasured).toEqual([
      {
        requirement: "r1",
        cause: "agent",
        reason: "the agent failed (exited non-zero) in every run of both arms",
        flags: [],
      },
    ]);
    // Failing in one arm only may be the skill's doing: r2 counts.
    expect(profile?.n).toBe(1);
    const skillVersusNone = report.arms?.[0]?.pairs.find((pair) => pair.label === "skill vs none");
    expect(skillVersusNone?.unmeasured.map((item) => item.requirement)).toEqual(["r1"]);
    expect(unmeasuredRunsOf(report)?.line).toMatch(
      /^2 of 4 runs could not be measured: the agent failed/,
    );
  });
});

describe("an incomplete run", () => {
  const manifest = manifestOf({ c: "claude-code" }, { "c/s/r1": 2, "c/s/r2": 2, "c/s/r3": 2 });
  const runs = [
    runResult("c", "s", "r1", "without", 0),
    runResult("c", "s", "r1", "with", 1),
    runResult("c", "s", "r2", "without", 0),
  ];

  it("counts stored runs against the plan, within a filter too", () => {
    expect(completenessOf(manifest, runs, {})).toEqual({ complete: false, stored: 3, planned: 6 });
    expect(completenessOf(manifest, runs, { requirements: ["r1"] })).toEqual({
      complete: true,
      stored: 2,
      planned: 2,
    });
  });

  it("says incomplete and marks every verdict provisional", () => {
    const completeness = completenessOf(manifest, runs, {});
    const report = buildReport(runs, {
      manifest,
      ...(completeness === undefined ? {} : { completeness }),
    });
    expect(report.completeness).toEqual({ complete: false, stored: 3, planned: 6 });
    const text = renderReportText(report);
    expect(text[2]).toMatch(/^incomplete: 3 of 6 runs stored — every verdict is provisional/);
    expect(text.find((line) => line.startsWith("c  "))).toMatch(/\(provisional\)/);
    const complete = buildReport(runs.slice(0, 2), { manifest });
    expect(renderReportText(complete).join("\n")).not.toMatch(/incomplete|provisional/);
  });
});

describe("the none control on a pass-ratio verifier (a SWE-style suite)", () => {
  // The check measured 5 of 19 tests passing on the untouched repository of r1 and 0 of 12 on
  // r2; r3 was not checked (as with --no-check). none reproduces r1's 5 of 19 in both arms.
  const untouchedScores = { "lib/r1": 5 / 19, "lib/r2": 0 };
  const runs: RunResult[] = (["without", "with"] as const).flatMap((arm) => [
    runResult("none", "lib", "r1", arm, 5 / 19),
    runResult("none", "lib", "r2", arm, 1 / 12),
    runResult("none", "lib", "r3", arm, 0.4),
  ]);
  const report = buildReport(runs, {
    manifest: { ...manifestOf({ none: "none" }), untouchedScores },
  });
  const find = (requirement: string) =>
    report.controls?.find((control) => control.requirement === requirement);

  it("must score what the untouched repository scored in the verifier check", () => {
    expect(find("r1")).toMatchObject({
      status: "as-expected",
      expectedScore: 5 / 19,
      expectedFrom: "untouched-check",
    });
    expect(find("r1")?.says).toMatch(/none reaches 0\.263 as it must \(the untouched repository/);
    // A score other than the check's: the verifier or the run path is not deterministic.
    expect(find("r2")).toMatchObject({ status: "not-as-expected", expectedScore: 0 });
    expect(find("r2")?.says).toMatch(/none reaches 0\.083, not 0: the untouched repository/);
  });

  it("falls back to 0 where no check measured the requirement, and says how to get the baseline", () => {
    expect(find("r3")).toMatchObject({
      status: "not-as-expected",
      expectedScore: 0,
      expectedFrom: "control",
    });
    expect(find("r3")?.says).toMatch(/run without --no-check/);
    const text = renderReportText(report).join("\n");
    expect(text).toMatch(/none +lib +r1 +0\.263 +0\.263 \(check\) +as-expected/);
    expect(unmeasuredRunsOf(report)?.line).toBe(
      "4 of 6 runs could not be measured: control none did not reach 0 (4)",
    );
  });

  it("keeps 0 for a reward-scored task the check did not measure (an environment-only task)", () => {
    const harbor = buildReport(
      (["without", "with"] as const).map((arm) => runResult("none", "task", "t", arm, 0)),
      { manifest: { ...manifestOf({ none: "none" }), untouchedScores } },
    );
    expect(harbor.controls?.[0]).toMatchObject({
      status: "as-expected",
      expectedScore: 0,
      expectedFrom: "control",
    });
  });
});
