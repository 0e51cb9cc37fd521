/**
 * Reports never hide a broken run: stores written with the real `ResultsStore`, read back with
 * `reportRunDir`, checked in the report data, the text and the CLI's JSON.
 *
 * The store (configuration `c`), with every expected figure worked out by hand below:
 * - `broken`: q1, q2 hit a collection error in both arms (ModuleNotFoundError of a helper).
 *   Both pairs unmeasurable ⇒ nothing measurable ⇒ unscorable, never "Ineffective, p = 1".
 * - `lost`: no result at all; q1's two keys failed 3 attempts each for infrastructure.
 * - `mixed`: q1–q6 without 0, with 0.5 (d = +50 each); q7 without 1, with 0, both runs flagged
 *   `broken-verifier` (unmeasured); q8 a collection error in both arms (unmeasurable).
 *   Measured: six +50 ⇒ Δ = 50, sign-flip p = 2/64 (only the all-equal sign assignments reach
 *   |mean| 50) ⇒ Golden. Had q7 (−100) and q8 (0) counted: sum 200 over 8, Δ = 25, and the seven
 *   non-zero deltas give p = 46/128 (derivation in report.test.ts) ⇒ Ineffective.
 * - `onearm`: q1 without 1, with a collection error (verifier works in the other arm ⇒ scored 0):
 *   d = −100. q2 with arm stored 1.0 but flagged `tampered` ⇒ scores 0; without 0.5: d = −50.
 *   q3 verifier timeout in both arms (scored 0 both): d = 0, a timeout pair. q4 agent timeout in
 *   the with arm, without 1: d = −100, a timeout pair. q5 weak verifier, 1 and 1: d = 0.
 *   Deltas −100, −50, 0, −100, 0: Δ = −50; three non-zero deltas, |sum| 250 reached only by the
 *   2 all-equal assignments of 8 ⇒ p = 0.25 ⇒ Ineffective. Without the timeout pairs (q3, q4):
 *   −100, −50, 0 ⇒ Δ = −50, p = 2/4 = 0.5.
 * Measurable pairs: 6 + 5 = 11; unmeasurable: 2 + 1 + 2 = 5; 16 pairs. Measured pairs with a
 * timeout: q3 and q4 of onearm = 2 (the old count, status "timeout" only, said 1).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInProcess } from "../../../test/support/cli.js";
import {
  infraAttempt,
  runResult,
  verifierRecord,
  writeStore,
} from "../../../test/support/results.js";
import { summarizeDeltas } from "../../stats/index.js";
import type { RunResult } from "../store/results.js";
import { tellingLines } from "./excerpt.js";
import { reportRunDir } from "./load.js";
import { renderReportText } from "./render.js";
import { type BenchReport, buildReport, REPORT_FORMAT } from "./report.js";

const MISSING_HELPER = "E   ModuleNotFoundError: No module named '_dependency_utils'";
const COLLECTION_OUTPUT = [
  "==================================== ERRORS ====================================",
  "_____________________ ERROR collecting test_feature.py ______________________",
  "ImportError while importing test module '/verifier/test_feature.py'.",
  "Hint: make sure your test modules/packages have valid Python names.",
  "Traceback:",
  "/usr/lib/python3.11/importlib/__init__.py:126: in import_module",
  "    return _bootstrap._gcd_import(name[level:], package, level)",
  "test_feature.py:3: in <module>",
  "    from _dependency_utils import load",
  MISSING_HELPER,
  "=========================== short test summary info ============================",
  "ERROR test_feature.py",
  "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!",
  "1 error in 0.05s",
].join("\n");
const TAMPER_EVIDENCE = "canary test_zz_must_fail_3f9a reported passed";
const INFRA_ERROR = "agent harness failed: spawn claude ENOENT";

function collectionError(skill: string, requirement: string, arm: "with" | "without"): RunResult {
  return runResult("c", skill, requirement, arm, 0, {
    flags: ["collection-error"],
    verifier: verifierRecord(COLLECTION_OUTPUT, { exitCode: 2 }),
  });
}

function storeContents(): {
  results: RunResult[];
  attempts: ReturnType<typeof infraAttempt>[];
} {
  const results: RunResult[] = [];
  for (const requirement of ["q1", "q2"]) {
    results.push(collectionError("broken", requirement, "without"));
    results.push(collectionError("broken", requirement, "with"));
  }
  for (let k = 1; k <= 6; k += 1) {
    results.push(runResult("c", "mixed", `q${k}`, "without", 0));
    results.push(runResult("c", "mixed", `q${k}`, "with", 0.5));
  }
  results.push(runResult("c", "mixed", "q7", "without", 1, { flags: ["broken-verifier"] }));
  results.push(runResult("c", "mixed", "q7", "with", 0, { flags: ["broken-verifier"] }));
  results.push(collectionError("mixed", "q8", "without"), collectionError("mixed", "q8", "with"));

  results.push(runResult("c", "onearm", "q1", "without", 1, { verifier: verifierRecord("ok") }));
  results.push(collectionError("onearm", "q1", "with"));
  results.push(runResult("c", "onearm", "q2", "without", 0.5));
  results.push(
    runResult("c", "onearm", "q2", "with", 1, {
      flags: ["tampered"],
      verifier: verifierRecord("4 passed", { exitCode: 0, evidence: [TAMPER_EVIDENCE] }),
    }),
  );
  for (const arm of ["without", "with"] as const) {
    results.push(
      runResult("c", "onearm", "q3", arm, 0, {
        flags: ["timeout"],
        verifier: verifierRecord("", { exitCode: null, durationMs: 60_000 }),
      }),
    );
  }
  results.push(runResult("c", "onearm", "q4", "without", 1));
  results.push(
    runResult("c", "onearm", "q4", "with", 0, { status: "timeout", flags: ["agent-timeout"] }),
  );
  for (const arm of ["without", "with"] as const) {
    results.push(runResult("c", "onearm", "q5", arm, 1, { flags: ["weak-verifier"] }));
  }
  const attempts = [1, 2, 3].flatMap((attempt) =>
    (["without", "with"] as const).map((arm) =>
      infraAttempt({ config: "c", skill: "lost", requirement: "q1", arm }, attempt, INFRA_ERROR),
    ),
  );
  return { results, attempts };
}

let root: string;
let runDir: string;
let report: BenchReport;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "report-measurement-"));
  runDir = join(root, "run");
  const { results, attempts } = storeContents();
  writeStore(runDir, results, attempts);
  report = await reportRunDir(runDir);
  // The CLI loads the bench commands on first use; loading them (vitest transforms each module)
  // is the hook's work, not the first CLI test's: three such tests ran out of 30 s at load 37.
  await import("../../cli/commands/bench.js");
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function profile(skill: string) {
  const found = report.profiles.find((candidate) => candidate.skill === skill);
  if (found === undefined) throw new Error(`no profile for ${skill}`);
  return found;
}

describe("verdicts on measurable pairs only", () => {
  it("makes a skill whose verifiers all failed to collect unscorable, with the reason", () => {
    const broken = profile("broken");
    expect(broken.class).toBeNull();
    expect(broken.p).toBeNull();
    expect(broken.delta).toBeNull();
    expect(broken.measured).toMatchObject({ total: 2, measurable: 0 });
    expect(broken.unscorable).toBe(
      "nothing measurable: verifier failed in both arms (collection error)",
    );
    expect(broken.requirements.map((outcome) => outcome.delta)).toEqual([null, null]);
    expect(broken.flagCounts).toEqual([
      {
        flag: "collection-error",
        label: "collection error",
        effect: "verifier-side",
        runs: 4,
        requirements: 2,
      },
    ]);
    expect(report.unscorable.map((item) => item.skill)).toEqual(["broken", "lost"]);
  });

  it("keeps a skill whose every attempt failed for infrastructure, with the last error", () => {
    const lost = profile("lost");
    expect(lost.class).toBeNull();
    expect(lost.measured).toMatchObject({ total: 1, measurable: 0 });
    expect(lost.requirements[0]?.lost.map((run) => [run.key, run.attempts, run.lastError])).toEqual(
      [
        ["c/lost/q1/with#1", 3, INFRA_ERROR],
        ["c/lost/q1/without#1", 3, INFRA_ERROR],
      ],
    );
    expect(lost.unscorable).toContain(
      "every attempt failed for infrastructure in both arms (6 attempts",
    );
    expect(lost.unscorable).toContain(INFRA_ERROR);
    expect(report.runs).toEqual({ scored: 30, infraAttempts: 6 });
    expect(report.measurement.lostRuns).toBe(2);
  });

  it("computes Δ, p and the class without the unmeasurable pairs", () => {
    const mixed = profile("mixed");
    expect(mixed.n).toBe(6);
    expect(mixed.delta).toBeCloseTo(50, 12);
    expect(mixed.p).toBeCloseTo(2 / 64, 12);
    expect(mixed.class).toBe("golden");
    expect(mixed.measured.unmeasured).toEqual([
      { requirement: "q7", cause: "flags", reason: "broken verifier", flags: ["broken-verifier"] },
      {
        requirement: "q8",
        cause: "flags",
        reason: "verifier failed in both arms (collection error)",
        flags: ["collection-error"],
      },
    ]);
    // Every requirement counted, as the old report did, would have said Ineffective.
    expect(summarizeDeltas([50, 50, 50, 50, 50, 50, -100, 0]).class).toBe("ineffective");
  });

  it("scores one-arm verifier failures, tampering and timeouts as 0 and counts every timeout", () => {
    const onearm = profile("onearm");
    expect(onearm.requirements.map((outcome) => outcome.delta)).toEqual([-100, -50, 0, -100, 0]);
    expect(onearm.delta).toBeCloseTo(-50, 12);
    expect(onearm.p).toBeCloseTo(0.25, 12);
    expect(onearm.class).toBe("ineffective");
    expect(onearm.sensitivity.withoutTimeouts).toMatchObject({ n: 3, class: "ineffective" });
    expect(onearm.sensitivity.withoutTimeouts.delta).toBeCloseTo(-50, 12);
    expect(onearm.sensitivity.withoutTimeouts.p).toBeCloseTo(0.5, 12);
    const tampered = onearm.requirements[1]?.detail.with[0];
    expect(tampered).toMatchObject({ passRatio: 1, score: 0, flags: ["tampered"] });
    expect(tampered?.verifier?.evidence).toEqual([TAMPER_EVIDENCE]);
    expect(Object.fromEntries(onearm.flagCounts.map((count) => [count.flag, count.runs]))).toEqual({
      "agent-timeout": 1,
      timeout: 2,
      tampered: 1,
      "collection-error": 1,
      "weak-verifier": 2,
    });
    expect(onearm.weakVerifiers).toEqual(["q5"]);
    expect(onearm.notes.join("\n")).toContain("weak verifier");
    expect(onearm.notes.join("\n")).toContain("counted in the verdict");
    expect(report.pairs.timeouts).toBe(2);
    expect(report.measurement).toMatchObject({ pairs: 16, measurable: 11 });
    expect(report.measurement.unmeasured).toHaveLength(5);
    expect(report.pairs.total).toBe(11);
  });

  it("treats a flag it does not know as unmeasured, never as a result", () => {
    const built = buildReport([
      runResult("c", "s", "q1", "without", 0),
      runResult("c", "s", "q1", "with", 1, { flags: ["from-a-newer-skillsmith"] }),
    ]);
    expect(built.profiles[0]?.unscorable).toBe("nothing measurable: from-a-newer-skillsmith");
    expect(built.profiles[0]?.class).toBeNull();
  });

  it("aggregates repeats: a verifier that worked in one repeat of an arm keeps the pair measured", () => {
    // without: repeat 1 collection error (0), repeat 2 clean 1.0 ⇒ y0 = 0.5; with: both repeats
    // collection errors ⇒ y1 = 0. The without arm proves the verifier works: d = −50, measured.
    const runs = [
      collectionError("s", "q1", "without"),
      runResult("c", "s", "q1", "without", 1, { repeat: 2 }),
      collectionError("s", "q1", "with"),
      { ...collectionError("s", "q1", "with"), repeat: 2 },
    ];
    const outcome = buildReport(runs).profiles[0]?.requirements[0];
    expect(outcome?.measurement).toEqual({ measurable: true });
    expect(outcome?.delta).toBeCloseTo(-50, 12);
    // Every repeat of both arms failing to collect: not measurable.
    const allBroken = buildReport([
      collectionError("s", "q1", "without"),
      { ...collectionError("s", "q1", "without"), repeat: 2 },
      collectionError("s", "q1", "with"),
      { ...collectionError("s", "q1", "with"), repeat: 2 },
    ]).profiles[0]?.requirements[0];
    expect(allBroken?.measurement.measurable).toBe(false);
  });
});

describe("the text report", () => {
  const text = () => renderReportText(report).join("\n");

  it("lists the unscorable skills with their reasons instead of a verdict", () => {
    expect(text()).toMatch(/c\s+broken\s+0\s+-\s+-\s+-\s+-\s+unscorable/);
    expect(text()).toMatch(/c\s+lost\s+0\s+-\s+-\s+-\s+-\s+unscorable/);
    expect(text()).not.toMatch(/broken\s.*Ineffective/);
    expect(text()).toMatch(/c\s+mixed\s+6\s+0\.0%\s+50\.0%\s+\+50\.0\s+0\.0313\s+Golden/);
    expect(text()).toContain(
      "  c / broken: nothing measurable: verifier failed in both arms (collection error)",
    );
    expect(text()).toContain("c / lost: measured 0 of 1 requirement;");
  });

  it("says verdicts use measurable pairs only and shows measured k of m per skill", () => {
    expect(text()).toContain("verdicts use measurable pairs only: 11 of 16 pairs measured");
    expect(text()).toContain("c / mixed: measured 6 of 8 requirements;");
    expect(text()).toContain("  q7: flags: broken verifier; not measured: broken verifier");
  });

  it("shows the verifier output's telling line and the tamper evidence beside the flags", () => {
    expect(text()).toContain(`      | ${MISSING_HELPER}`);
    expect(text()).toContain(`      evidence: ${TAMPER_EVIDENCE}`);
    expect(text()).toContain("measured pairs with a timeout (agent or verifier): 2");
    expect(text()).toContain("verifier timeout 2 runs (1 requirement)");
    expect(text()).toContain(`lost to infrastructure after 3 attempts: ${INFRA_ERROR}`);
  });

  it("bounds the excerpt", () => {
    const long = `${"x".repeat(1000)}Error: boom\n`.repeat(50);
    const lines = tellingLines(long);
    expect(lines.length).toBeLessThanOrEqual(4);
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(240);
    expect(tellingLines(COLLECTION_OUTPUT)).toContain(MISSING_HELPER);
  });

  it("keeps terminal control out of what it prints from a run", () => {
    // A hostile verifier's output: a window-title OSC, a clear-screen CSI, a bell, a C1 CSI.
    const hostile = "\u001b]0;pwned\u0007\u001b[2JE   AssertionError: \u009b31mred\u0008";
    const built = buildReport([
      runResult("c", "s", "q1", "without", 0, {
        flags: ["collection-error", "odd\u001b]8;;http://x\u0007flag"],
        verifier: verifierRecord(hostile, { evidence: ["\u001b[1Aup"] }),
      }),
      runResult("c", "s", "q1", "with", 0, { flags: ["collection-error"] }),
    ]);
    const printed = renderReportText(built).join("\n");
    expect(printed).toContain("E   AssertionError: 31mred");
    expect(printed).toContain("evidence: up");
    expect(printed).toContain("odd]8;;http://xflag");
    // Nothing but tab and newline below U+0020, nothing in DEL and the C1 range.
    const control = [...printed].filter((character) => {
      const code = character.codePointAt(0) ?? 0;
      return (code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f);
    });
    expect(control).toEqual([]);
  });
});

describe("bench report --json and the filters", () => {
  it("prints a versioned document with flags, reasons, counts and the verifier output per run", async () => {
    const cli = await runInProcess(["bench", "report", runDir, "--json"]);
    expect(cli.code).toBe(0);
    const parsed = JSON.parse(cli.stdout) as BenchReport;
    expect(parsed.format).toBe(REPORT_FORMAT);
    const broken = parsed.profiles.find((entry) => entry.skill === "broken");
    const run = broken?.requirements[0]?.detail.without[0];
    expect(run?.flags).toEqual(["collection-error"]);
    expect(run?.verifier?.output).toBe(COLLECTION_OUTPUT);
    expect(run?.excerpt).toContain(MISSING_HELPER);
    expect(broken?.requirements[0]?.flags).toEqual(["collection-error"]);
    expect(broken?.unscorable).toContain("collection error");
    expect(parsed.measurement.measurable).toBe(11);
    expect(parsed.flagCounts.find((count) => count.flag === "collection-error")).toMatchObject({
      runs: 7,
      requirements: 4,
    });
  });

  it("reports only the skills and requirements asked for", async () => {
    const cli = await runInProcess([
      "bench",
      "report",
      runDir,
      "--json",
      "--skill",
      "mixed",
      "--requirement",
      "q1",
      "--requirement",
      "q8",
    ]);
    expect(cli.code).toBe(0);
    const parsed = JSON.parse(cli.stdout) as BenchReport;
    expect(parsed.filter).toEqual({ skills: ["mixed"], requirements: ["q1", "q8"] });
    expect(parsed.profiles.map((entry) => entry.skill)).toEqual(["mixed"]);
    expect(parsed.profiles[0]?.requirements.map((outcome) => outcome.id)).toEqual(["q1", "q8"]);
    expect(parsed.profiles[0]?.measured).toMatchObject({ total: 2, measurable: 1 });

    const text = await runInProcess(["bench", "report", runDir, "--requirement", "onearm/q2"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("filtered to requirements onearm/q2");
    expect(text.stdout).toContain("c / onearm: measured 1 of 1 requirement;");
    expect(text.stdout).not.toContain("c / mixed");
  });

  it("refuses a filter that names nothing in the run, listing what exists", async () => {
    const cli = await runInProcess(["bench", "report", runDir, "--skill", "nope"]);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain("--skill nope");
    expect(cli.stderr).toContain("broken, lost, mixed, onearm");
    expect(cli.stdout).toBe("");
  });
});
