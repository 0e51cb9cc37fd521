import { describe, expect, it } from "vitest";
import { runInProcess } from "./support/cli.js";

const run = runInProcess;

interface QuickstartJson {
  skills: {
    path: string;
    validation: { valid: boolean };
    audit: { findings: { severity: string }[] };
  }[];
  statistics: {
    deltas: number[];
    summary: { signflip: { p: number; method: string }; class: string };
  };
}

describe("skillsmith quickstart (the README's main job)", () => {
  it("validates and audits the bundled examples and prints the statistics example as JSON", async () => {
    const result = await run(["quickstart", "--json"]);
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout) as QuickstartJson;
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
    // In units of one check (100/12 points) the deltas are 3,1,2,0,4,1,2,3,-1,2: nine non-zero
    // magnitudes summing to 19, observed sum 17. |S| >= 17 needs the flipped magnitudes to sum
    // to at most 1: no flip, or one of the three 1s, times two signs = 8 of 2^9 assignments.
    expect(parsed.statistics.summary.signflip.p).toBeCloseTo(8 / 512, 12);
    expect(parsed.statistics.summary.signflip.method).toBe("exact");
    expect(parsed.statistics.summary.class).toBe("golden");
  });

  it("prints a readable table and the verdict as text", async () => {
    const result = await run(["quickstart"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/changelog-entries\s+yes/);
    expect(result.stdout).toMatch(/release-notes-writer\s+NO/);
    expect(result.stdout).toContain("verdict: GOLDEN");
  });
});
