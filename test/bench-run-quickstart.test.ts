/**
 * The embedded default end to end: examples/quickstart replayed from its recorded patches, real
 * git workspaces, real pytest verifiers (in bubblewrap when available), verdicts from the store.
 *
 * Expected values, computed by hand from the recorded patches and the verifiers (4 checks per
 * requirement, so pass ratios are quarters):
 *
 * money-decimal, checks passed without → with (the float versions fail the half-cent checks):
 *   r01 2→4, r02 1→4, r03 2→4, r04 2→4, r05 4→4, r06 3→4, r07 1→3, r08 2→4, r09 4→4, r10 1→3
 *   d = 100·(y¹ − y⁰) = [50, 75, 50, 50, 0, 25, 50, 50, 0, 50]; Δ = 400 / 10 = 40.
 *   Sign-flip: the 8 non-zero deltas are all positive, so only the all-plus and all-minus
 *   assignments of them reach |mean| ≥ 40; the 2 zeros flip freely: p = 2·2² / 2¹⁰ = 8/1024
 *   = 0.0078125 < 0.05 and Δ > 0 → Golden. Pass ratio 22/40 = 55% → 38/40 = 95%.
 * iso-dates:
 *   d01 3→4, d02 4→0 (the assisted run wrote overdue.py at the repository root, not in
 *   invoicer/), d03 4→4, d04 3→3 (same failed check), d05 3→4, d06 4→4, d07 4→4, d08 3→4,
 *   d09 4→4, d10 4→3
 *   d = [25, −100, 0, 0, 25, 0, 0, 25, 0, −25]; Δ = −50 / 10 = −5.
 *   Sign-flip: |sum| ≥ 50 unless the four ±25 terms sum to ∓100 against the ±100 term, i.e. one
 *   assignment of the four out of 16 for each sign of the 100: p = 15/16 = 0.9375 → Ineffective.
 *   Pass ratio 36/40 = 90% → 34/40 = 85%.
 * Pooled over the 20 pairs: 58/80 = 72.5% → 72/80 = 90%, +17.5 points.
 * Identical outcomes: r05, r09 (both 100%), d03, d06, d07, d09 (both 100%), d04 (same set) = 7.
 * |Δy| ≥ 0.5: r01, r02, r03, r04, r07, r08, r10, d02 = 8. Misplaced deliverable: d02 only.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderReportText } from "../src/bench/analysis/render.js";
import type { BenchReport } from "../src/bench/analysis/report.js";
import {
  type QuickstartEvaluation,
  renderQuickstartText,
  runQuickstartEvaluation,
} from "../src/bench/run/quickstart.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { runCli } from "../src/cli/program.js";
import { quickstartRunCopy } from "./support/quickstart-run.js";

let root: string;
let evaluation: QuickstartEvaluation;
const warnings: string[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-run-quickstart-"));
  // The evaluation this test run made once, copied here (test/support/quickstart-run.ts): this
  // file checks what that fresh evaluation did and stored, and resumes its own copy.
  const run = await quickstartRunCopy(root);
  evaluation = run.evaluation;
  warnings.push(...run.warnings);
}, 900_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function profile(report: BenchReport, skill: string) {
  const found = report.profiles.find((candidate) => candidate.skill === skill);
  if (found === undefined) throw new Error(`no profile for ${skill}`);
  return found;
}

describe("quickstart evaluation (replayed patches)", () => {
  it("scores all 40 runs without failures", () => {
    expect(evaluation.summary.total).toBe(40);
    expect(evaluation.summary.executed).toBe(40);
    expect(evaluation.summary.failed).toEqual([]);
    if (evaluation.sandbox === "unsafe") expect(warnings.join("\n")).toMatch(/without a sandbox/);
  });

  it("finds money-decimal Golden with the hand-computed deltas, Δ and p", () => {
    const money = profile(evaluation.report, "money-decimal");
    expect(money.requirements.map((outcome) => outcome.delta)).toEqual([
      50, 75, 50, 50, 0, 25, 50, 50, 0, 50,
    ]);
    expect(money.delta).toBeCloseTo(40, 10);
    expect(money.p).toBeCloseTo(8 / 1024, 12);
    expect(money.class).toBe("golden");
    expect(money.without).toBeCloseTo(22 / 40, 12);
    expect(money.with).toBeCloseTo(38 / 40, 12);
    // Replayed patches show no skills: activation is unknown, not zero.
    expect(money.activation_rate).toBeNull();
  });

  it("finds iso-dates Ineffective with the hand-computed deltas, Δ and p", () => {
    const dates = profile(evaluation.report, "iso-dates");
    expect(dates.requirements.map((outcome) => outcome.delta)).toEqual([
      25, -100, 0, 0, 25, 0, 0, 25, 0, -25,
    ]);
    expect(dates.delta).toBeCloseTo(-5, 10);
    expect(dates.p).toBeCloseTo(15 / 16, 12);
    expect(dates.class).toBe("ineffective");
    expect(dates.without).toBeCloseTo(0.9, 12);
    expect(dates.with).toBeCloseTo(0.85, 12);
  });

  it("reports the pooled figures, identical pairs, large changes and the misplaced deliverable", () => {
    const { report } = evaluation;
    expect(report.configs).toHaveLength(1);
    expect(report.configs[0]?.without).toBeCloseTo(58 / 80, 12);
    expect(report.configs[0]?.with).toBeCloseTo(72 / 80, 12);
    expect(report.configs[0]?.delta).toBeCloseTo(17.5, 10);
    expect(report.pairs.total).toBe(20);
    expect(report.pairs.identical.keys.map((key) => key.requirement).sort()).toEqual([
      "d03-days-between",
      "d04-month-end",
      "d06-quarter",
      "d07-long-format",
      "d09-iso-week",
      "r05-parse",
      "r09-interest",
    ]);
    expect(report.pairs.largeChanges.keys.map((key) => key.requirement).sort()).toEqual([
      "d02-overdue",
      "r01-line-total",
      "r02-tax",
      "r03-split",
      "r04-discount",
      "r07-convert",
      "r08-sum",
      "r10-allocate",
    ]);
    expect(report.pairs.misplacedDeliverables.keys).toEqual([
      {
        config: "replay",
        skill: "iso-dates",
        requirement: "d02-overdue",
        missing: ["invoicer/overdue.py"],
        deltaY: -1,
      },
    ]);
    // One configuration: nothing to correlate.
    expect(report.correlations).toEqual([]);
  });

  it("gave both arms byte-identical workspaces and bound each score to its trajectory", () => {
    const store = ResultsStore.openReadOnly(evaluation.runDir);
    try {
      const results = store.results();
      expect(results).toHaveLength(40);
      expect(new Set(results.map((result) => result.workspaceDigest)).size).toBe(1);
      for (const result of results) {
        const trajectory = result.trajectory as { harness: string; taskId: string; arm: string };
        expect(trajectory.harness).toBe("replay");
        expect(trajectory.taskId).toBe(`${result.skill}/${result.requirement}`);
        expect(trajectory.arm).toBe(result.arm);
      }
    } finally {
      store.close();
    }
  });

  it("renders a verdict table people can read", () => {
    const text = renderReportText(evaluation.report).join("\n");
    expect(text).toMatch(
      /replay\s+money-decimal\s+10\s+55\.0%\s+95\.0%\s+\+40\.0\s+0\.0078\s+Golden/,
    );
    expect(text).toMatch(
      /replay\s+iso-dates\s+10\s+90\.0%\s+85\.0%\s+-5\.0\s+0\.9375\s+Ineffective/,
    );
    expect(text).toContain("replay/iso-dates/d02-overdue: invoicer/overdue.py");
    const quickstart = renderQuickstartText(evaluation).join("\n");
    // Says plainly that recorded patches were replayed, then shows the same table.
    expect(quickstart).toMatch(
      /^Evaluated .*examples\/quickstart\/suite by replaying the recorded patches/,
    );
    expect(quickstart).toContain(text);
    // From the harness registry: the built-ins with a default model, then builtin (takes any).
    expect(quickstart).toContain("--agent claude-code --model anthropic:claude-sonnet-4-5");
    expect(quickstart).toContain(
      "(or --agent codex --model openai:gpt-5, or --agent builtin --model <provider:model>)",
    );
  });

  it("resumes without re-running anything and reports the same from the CLI", async () => {
    const again = await runQuickstartEvaluation({
      runDir: evaluation.runDir,
      cacheDir: join(root, "cache"),
    });
    expect(again.summary.executed).toBe(0);
    expect(again.summary.alreadyDone).toBe(40);

    let stdout = "";
    const code = await runCli(["bench", "report", evaluation.runDir, "--json"], {
      stdout: (text) => {
        stdout += text;
      },
      stderr: () => undefined,
    });
    expect(code).toBe(0);
    const parsed = JSON.parse(stdout) as BenchReport;
    expect(parsed.profiles.map((entry) => [entry.skill, entry.config, entry.class])).toEqual([
      ["iso-dates", "replay", "ineffective"],
      ["money-decimal", "replay", "golden"],
    ]);
    const manifest = JSON.parse(
      await readFile(join(evaluation.runDir, "manifest.json"), "utf8"),
    ) as {
      suite: { name: string };
      commandLines: string[][];
    };
    expect(manifest.suite.name).toBe("quickstart");
    expect(manifest.commandLines).toHaveLength(2);
  });
});
