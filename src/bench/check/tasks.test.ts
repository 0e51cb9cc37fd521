import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../../test/support/temporary.js";
import { excludedTaskChecks, readCachedTaskCheck } from "./tasks.js";

const cleanups = cleanupsAfterEach();

const problem = (path: string, message: string) => ({ path, message, severity: "error" }) as const;

describe("excludedTaskChecks", () => {
  it("makes each left-out requirement its own broken result, with whose fault it is", () => {
    const checks = excludedTaskChecks([
      {
        skill: "a",
        requirement: "a",
        problems: [problem("/s/skills/a/requirements/a/verifier/test.sh", "does not exist")],
      },
      {
        skill: "b",
        requirements: ["b1", "b2"],
        problems: [problem("/s/skills/b/requirements/b1/solution-script", "needs solve.sh")],
      },
      { skill: "c", problems: [problem("/s/skills/c/environment/Dockerfile", "missing")] },
    ]);
    expect(
      checks.map((check) => [check.skill, check.requirement, check.status, check.fault]),
    ).toEqual([
      ["a", "a", "broken", "verifier"],
      ["b", "b1", "broken", "oracle"],
      ["b", "b2", "broken", "oracle"],
      ["c", "c", "broken", "environment"],
    ]);
    expect(checks.every((check) => !check.ok)).toBe(true);
    expect(checks[0]?.problems[0]).toContain("/s/skills/a/requirements/a/verifier/test.sh");
  });

  it("does not take the fault from the task's own name", () => {
    // A task called like a part of a task folder: only the path below skills/<task>/ decides.
    const [check] = excludedTaskChecks([
      {
        skill: "verifier-solution-environment",
        requirement: "r",
        problems: [problem("/s/skills/verifier-solution-environment/skill.yaml", "bad field")],
      },
    ]);
    expect(check?.fault).toBeUndefined();
    expect(check?.status).toBe("broken");
  });
});

describe("readCachedTaskCheck", () => {
  const control = { passRatio: 0, flags: [], status: "completed", evidence: ["reward.txt: 0"] };
  /** A sound task as the check caches it: the oracle reaches 1, the untouched directory 0. */
  const sound = {
    skill: "greet",
    requirement: "greet",
    status: "ok",
    oracle: { ...control, passRatio: 1 },
    untouched: control,
    ok: true,
    problems: [],
  };

  async function cached(value: unknown): Promise<unknown> {
    const file = join(await temporaryDirectoryIn(cleanups, "skillsmith-task-check-"), "c.json");
    await writeFile(file, typeof value === "string" ? value : JSON.stringify(value));
    return readCachedTaskCheck(file, "greet", "greet");
  }

  it("reads an entry written with the tag and one of an earlier version without it", async () => {
    expect(await cached({ format: "skillsmith-task-check/1", ...sound })).toEqual({
      ...sound,
      cached: true,
    });
    expect(await cached(sound)).toEqual({ ...sound, cached: true });
  });

  it.each([
    ["not JSON", "{ half"],
    // Before: these were trusted (skill, requirement, ok, status and problems only were looked at).
    ["an unknown status", { ...sound, status: "great" }],
    ["a control without flags", { ...sound, oracle: { passRatio: 1, status: "completed" } }],
    ["a pass ratio as text", { ...sound, untouched: { ...control, passRatio: "0" } }],
    ["ok with problems", { ...sound, problems: ["the oracle failed"] }],
    ["ok and broken at once", { ...sound, status: "broken" }],
    ["another requirement's", { ...sound, requirement: "other" }],
    ["a later format", { format: "skillsmith-task-check/2", ...sound }],
  ])("does not trust a poisoned or foreign entry (%s): a miss", async (_case, value) => {
    expect(await cached(value)).toBeUndefined();
  });
});
