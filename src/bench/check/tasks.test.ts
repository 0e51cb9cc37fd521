import { describe, expect, it } from "vitest";
import { excludedTaskChecks } from "./tasks.js";

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
