import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../test/support/temporary.js";
import { evaluateSkill } from "./evaluate.js";

const cleanups = cleanupsAfterEach();

/** A skill folder and an evaluation folder; every call stops before any model or run. */
async function setUp() {
  const root = await temporaryDirectoryIn(cleanups, "evaluate-");
  const skill = join(root, "skill");
  const workDir = join(root, "eval");
  await mkdir(skill);
  await mkdir(workDir);
  const options = {
    skill,
    repository: "https://example.invalid/repository.git",
    commit: "0".repeat(40),
    agent: "claude-code" as const,
    model: "anthropic:claude-sonnet-4-5",
    workDir,
  };
  return { skill, workDir, options };
}

describe("evaluateSkill reading its inputs", () => {
  it("tells a missing SKILL.md from one that is there but unreadable", async () => {
    const { skill, options } = await setUp();
    await expect(evaluateSkill(options)).rejects.toMatchObject({ code: "report.skill-missing" });
    await selfLoopingLink(skill, "SKILL.md");
    await expect(evaluateSkill(options)).rejects.toMatchObject({
      code: "core.file-unreadable",
      location: { file: join(skill, "SKILL.md") },
    });
  });

  it("starts afresh without an evaluation record, and refuses one it cannot read", async () => {
    const { skill, workDir, options } = await setUp();
    await writeFile(join(skill, "SKILL.md"), "---\nname: skill\ndescription: d\n---\nBody\n");
    // No record: a new evaluation, which (with no suite and no generator) needs a generator.
    await expect(evaluateSkill(options)).rejects.toMatchObject({
      code: "report.eval-needs-generator",
    });
    await mkdir(join(workDir, "eval.json"));
    await expect(evaluateSkill(options)).rejects.toMatchObject({
      code: "core.file-unreadable",
      location: { file: join(workDir, "eval.json") },
    });
  });

  it("refuses a record that does not parse, naming the field (before: only its format and digest were looked at)", async () => {
    const { skill, workDir, options } = await setUp();
    await writeFile(join(skill, "SKILL.md"), "---\nname: skill\ndescription: d\n---\nBody\n");
    const record = {
      format: "skillsmith-eval/1",
      skill: { path: skill, digest: "d" },
      repository: options.repository,
      suite: { path: join(workDir, "suite"), source: "given" },
      generationCostUsd: 0,
    };
    await writeFile(join(workDir, "eval.json"), JSON.stringify(record));
    await expect(evaluateSkill(options)).rejects.toMatchObject({
      code: "report.eval-state-damaged",
      location: { file: join(workDir, "eval.json"), field: "commit" },
    });
    await writeFile(
      join(workDir, "eval.json"),
      JSON.stringify({ ...record, commit: options.commit, format: "skillsmith-eval/2" }),
    );
    await expect(evaluateSkill(options)).rejects.toMatchObject({
      code: "report.eval-state-damaged",
      message: expect.stringMatching(/later skillsmith/),
    });
  });
});
