import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { auditSkillFolder, validateSkillFolder } from "../src/skill/index.js";

const repoRoot = resolve(import.meta.dirname, "..");
const examples = join(repoRoot, "examples", "skills");
const benchSkills = resolve(repoRoot, "..", "shared", "fixtures", "swe-skills-bench", "skills");
const hasBenchSkills = existsSync(benchSkills);

describe("bundled example skills", () => {
  it.each(["python-test-fixtures", "changelog-entries"])(
    "%s is valid, without warnings, and audits clean",
    async (name) => {
      const validation = await validateSkillFolder(join(examples, name));
      expect(validation.errors).toEqual([]);
      expect(validation.warnings).toEqual([]);
      expect((await auditSkillFolder(join(examples, name))).findings).toEqual([]);
    },
  );

  it("release-notes-writer fails on its name and its description", async () => {
    const result = await validateSkillFolder(join(examples, "release-notes-writer"));
    expect(result.valid).toBe(false);
    expect(result.errors.map((finding) => [finding.code, finding.field, finding.line])).toEqual([
      ["name-mismatch", "name", 2],
      ["description-too-long", "description", 3],
    ]);
  });

  it("deploy-checklist fails on a duplicate key, an unknown field and a numeric metadata value", async () => {
    const result = await validateSkillFolder(join(examples, "deploy-checklist"));
    expect(result.errors.map((finding) => [finding.code, finding.line])).toEqual([
      ["unknown-field", 4],
      ["yaml-duplicate-key", 5],
      ["metadata-value-not-string", 8],
    ]);
  });

  it("dev-environment-setup is valid but its audit finds the planted hazards", async () => {
    const path = join(examples, "dev-environment-setup");
    expect((await validateSkillFolder(path)).valid).toBe(true);
    const findings = (await auditSkillFolder(path)).findings.map((finding) => [
      finding.code,
      finding.file.slice(path.length + 1),
      finding.line,
      finding.severity,
    ]);
    for (const expected of [
      ["html-comment-instruction", "SKILL.md", 8, "high"],
      ["pipe-to-shell", "SKILL.md", 18, "high"],
      ["credential-access", "SKILL.md", 27, "high"],
      ["env-exfiltration", "scripts/bootstrap.sh", 4, "high"],
    ]) {
      expect(findings).toContainEqual(expected);
    }
  });
});

describe("real skills from SWE-Skills-Bench", () => {
  it.skipIf(!hasBenchSkills)(
    `every skill in ${benchSkills} is valid (skipped when that fixture folder is missing)`,
    async () => {
      for (const name of ["python-resilience", "risk-metrics-calculation"]) {
        const result = await validateSkillFolder(join(benchSkills, name));
        expect(result.errors).toEqual([]);
      }
    },
  );
});
