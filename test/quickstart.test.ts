import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliRun, runInProcess } from "./support/cli.js";
import { quickstartRunCopy } from "./support/quickstart-run.js";

interface QuickstartJson {
  skills: {
    path: string;
    validation: { valid: boolean };
    audit: { findings: { severity: string }[] };
  }[];
  evaluation: {
    profiles: { skill: string; config: string; delta: number; p: number; class: string }[];
  };
  htmlReport: string;
}

let scratch: string;
let first: CliRun;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-quickstart-"));
  // The evaluation itself (40 scored runs in sandboxes, the same library call the command makes)
  // is the one this test run made once and shares (test/support/quickstart-run.ts); its fresh
  // run is checked in bench-run-quickstart. Evaluating again here cost a second evaluation per
  // suite (a third of the quickstart files' CPU time). What this file tests is the command: the
  // skills' checks, the JSON and text it prints, the HTML report and resuming a run directory.
  await quickstartRunCopy(scratch);
  first = await runInProcess(["quickstart", "--json", "--out", join(scratch, "run")], {
    cwd: scratch,
  });
  // The shared evaluation took over 180 s at load 25-30 for the file that makes it.
}, 900_000);
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("skillsmith quickstart (the README's main job)", () => {
  it("validates and audits the bundled example skills", () => {
    expect(first.code).toBe(0);
    const parsed = JSON.parse(first.stdout) as QuickstartJson;
    const byName = new Map(parsed.skills.map((skill) => [skill.path.split("/").pop(), skill]));
    // Good examples pass both checks; the bad ones are bad in the way examples/skills/README.md says.
    for (const good of ["changelog-entries", "python-test-fixtures"]) {
      expect(byName.get(good)?.validation.valid).toBe(true);
      expect(byName.get(good)?.audit.findings).toEqual([]);
    }
    expect(byName.get("release-notes-writer")?.validation.valid).toBe(false);
    expect(byName.get("deploy-checklist")?.validation.valid).toBe(false);
    expect(byName.get("dev-environment-setup")?.validation.valid).toBe(true);
    expect(
      byName
        .get("dev-environment-setup")
        ?.audit.findings.some((finding) => finding.severity === "high"),
    ).toBe(true);
  });

  it("evaluates the quickstart suite end to end and reaches the hand-computed verdicts", () => {
    const parsed = JSON.parse(first.stdout) as QuickstartJson;
    const profile = (skill: string) =>
      parsed.evaluation.profiles.find((entry) => entry.skill === skill);
    // money-decimal: checks passed (of 4) differ by +2,+3,+2,+2,0,+1,+2,+2,0,+2 → Δ = 16·25/10 = +40
    // points; all 8 non-zero deltas positive, so only the all-plus and all-minus assignments reach
    // |S| = 16: p = 2/2^8.
    expect(profile("money-decimal")).toMatchObject({ class: "golden" });
    expect(profile("money-decimal")?.delta).toBeCloseTo(40, 10);
    expect(profile("money-decimal")?.p).toBeCloseTo(2 / 256, 12);
    // iso-dates: +1,−4,0,0,+1,0,0,+1,0,−1 checks → Δ = −2·25/10 = −5 points; of the 2^5 sign
    // assignments of {1,1,1,1,4} only the two with |S| = 0 fall below |S| = 2: p = 30/32.
    expect(profile("iso-dates")).toMatchObject({ class: "ineffective" });
    expect(profile("iso-dates")?.delta).toBeCloseTo(-5, 10);
    expect(profile("iso-dates")?.p).toBeCloseTo(30 / 32, 12);
  });

  it("resumes: a second run executes nothing and prints the same verdict table as text", async () => {
    const again = await runInProcess(["quickstart", "--out", join(scratch, "run")], {
      cwd: scratch,
    });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/0 runs now, 40 already stored/);
    expect(again.stdout).toMatch(
      /money-decimal\s+10\s+55\.0%\s+95\.0%\s+\+40\.0\s+0\.0078\s+Golden/,
    );
    expect(again.stdout).toMatch(/release-notes-writer\s+NO/);
    expect(again.stdout).toContain(`HTML report: ${join("run", "report.html")}`);
    // Every phase says so on stderr as it starts, in order: nothing is silent.
    const phases = again.stderr
      .split("\n")
      .filter((line) => /^\[\d\/4\]/.test(line))
      .map((line) => line.slice(0, 5));
    expect(phases).toEqual(["[1/4]", "[2/4]", "[3/4]", "[4/4]"]);
    // The preparation's own line comes between; resumed, no verifier is left to check.
    expect(again.stderr).toMatch(
      /\[2\/4\][\s\S]*checking the verifiers of 0 requirement\(s\)[\s\S]*\[3\/4\]/,
    );
    expect(again.stderr).toMatch(/\[3\/4\] running 0 paired runs \(40 already stored\)/);
  });

  it("writes the self-contained HTML report beside the results", async () => {
    const parsed = JSON.parse(first.stdout) as QuickstartJson;
    expect(parsed.htmlReport).toBe(join(scratch, "run", "report.html"));
    const html = await readFile(parsed.htmlReport, "utf8");
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain("money-decimal");
    // Opens offline: no script or stylesheet is fetched from anywhere.
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href="https?:/);
  });
});
