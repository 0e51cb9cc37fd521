import { describe, expect, it } from "vitest";
import type { SuiteRequirement, SuiteSkill } from "../suite/types.js";
import { classify, type VerifierMeasurement, withToolNeeds } from "./check.js";
import type { Measured } from "./measure.js";
import { checkJson, renderCheckText } from "./render.js";

const requirement = {
  id: "batch1",
  background: "",
  requirement: "Add analyze_ci.py.",
  fileOperations: ["analyze_ci.py"],
  acceptanceCriteria: ["it parses logs"],
  form: "sections",
  raw: "## Requirement\nAdd analyze_ci.py.\n",
  folder: "/suite/skills/s/requirements/batch1",
  verifier: {
    command: "python -m pytest test_s.py",
    folder: "/suite/skills/s/requirements/batch1/verifier",
    files: ["test_s.py"],
    mountPath: "/workspace/tests",
    cwd: "/workspace/tests",
  },
} as const satisfies SuiteRequirement;
const skill: SuiteSkill = {
  id: "s",
  folder: "/suite/skills/s",
  skillFolders: [],
  requirements: [requirement],
};

function run(overrides: Partial<VerifierMeasurement>): VerifierMeasurement {
  return {
    passed: 0,
    total: 10,
    passRatio: 0,
    flags: [],
    exitCode: 1,
    timedOut: false,
    durationMs: 1500,
    output: "",
    erroredBeforeChecking: false,
    ...overrides,
  };
}

function measured(untouched: VerifierMeasurement, reference?: VerifierMeasurement): Measured {
  return {
    untouched,
    ...(reference === undefined ? {} : { reference }),
    digest: "d",
    cached: false,
  };
}

const noKeywords = { keywordOnly: [], testCount: 10 };

/** The check of an untouched run whose tests errored before checking anything, as diagnosed. */
function classifyCollectionError(diagnosis: NonNullable<VerifierMeasurement["diagnosis"]>) {
  return classify(
    skill,
    requirement,
    measured(
      run({ total: 0, flags: ["collection-error"], erroredBeforeChecking: true, diagnosis }),
    ),
    noKeywords,
    0.5,
  );
}

describe("classify", () => {
  it("is ok below the threshold, weak from it, and weak at 100% whatever the threshold", () => {
    const at = (passed: number, threshold = 0.5) =>
      classify(
        skill,
        requirement,
        measured(run({ passed, passRatio: passed / 10 })),
        noKeywords,
        threshold,
      );
    expect(at(4).status).toBe("ok");
    expect(at(4).untouchedPassRatio).toBe(0.4);
    expect(at(5).status).toBe("weak");
    expect(at(5).reason).toContain("5 of 10");
    expect(at(9, 0.95).status).toBe("ok");
    expect(at(10, 1).status).toBe("weak");
    expect(at(10, 1).reason).toContain("cannot tell a solution from none");
  });

  it("calls a timeout, no checks, or a verifier crash of its own broken, with no ratio", () => {
    const timeout = classify(
      skill,
      requirement,
      measured(run({ timedOut: true, flags: ["timeout"], durationMs: 300_000 })),
      noKeywords,
      0.5,
    );
    expect(timeout).toMatchObject({ status: "broken", untouchedPassRatio: null });
    expect(timeout.reason).toContain("timed out");
    expect(
      classify(
        skill,
        requirement,
        measured(run({ total: 0, flags: ["no-checks"] })),
        noKeywords,
        0.5,
      ).reason,
    ).toContain("no checks");
    const helper = classifyCollectionError({
      kind: "broken",
      reason: "_dependency_utils cannot be imported",
    });
    expect(helper).toMatchObject({
      status: "broken",
      untouchedPassRatio: null,
      reason: "_dependency_utils cannot be imported",
    });
  });

  it("calls a verifier failing to import the deliverable ok, at 0", () => {
    const check = classifyCollectionError({
      kind: "deliverable-missing",
      reason: "imports analyze_ci: failing as it should",
    });
    expect(check).toMatchObject({ status: "ok", untouchedPassRatio: 0 });
    expect(check.reason).toContain("failing as it should");
  });

  it("calls a verifier the reference solution does not pass broken, keeping the ratio", () => {
    const check = classify(
      skill,
      requirement,
      measured(run({ passed: 1, passRatio: 0.1 }), run({ passed: 8, passRatio: 0.8 })),
      noKeywords,
      0.5,
    );
    expect(check).toMatchObject({ status: "broken", untouchedPassRatio: 0.1 });
    expect(check.reason).toContain("8 of 10");
    const passing = classify(
      skill,
      requirement,
      measured(run({ passed: 1, passRatio: 0.1 }), run({ passed: 10, passRatio: 1 })),
      noKeywords,
      0.5,
    );
    expect(passing.status).toBe("ok");
  });

  it("calls a verifier mostly made of keyword-only tests weak", () => {
    const keywordOnly = Array.from({ length: 6 }, (_, index) => ({
      file: "test_s.py",
      test: `test_${index}`,
      line: index + 1,
      reason: "greps",
    }));
    const check = classify(
      skill,
      requirement,
      measured(run({ passed: 0 })),
      { keywordOnly, testCount: 10 },
      0.5,
    );
    expect(check.status).toBe("weak");
    expect(check.reason).toMatch(/^keyword-only: 6 of 10 tests only grep source text/);
    const few = classify(
      skill,
      requirement,
      measured(run({ passed: 0 })),
      { keywordOnly: keywordOnly.slice(0, 4), testCount: 10 },
      0.5,
    );
    expect(few.status).toBe("ok");
  });
});

describe("checkJson", () => {
  it("prints exactly the documented fields", () => {
    const check = classify(
      skill,
      requirement,
      measured(run({ passed: 3, passRatio: 0.3 })),
      noKeywords,
      0.5,
    );
    const json = checkJson({
      format: "skillsmith-check/1",
      weakThreshold: 0.5,
      requirements: [check],
      environments: [],
      durationMs: 1,
    });
    expect(json).toEqual({
      requirements: [
        {
          skill: "s",
          requirement: "batch1",
          status: "ok",
          untouchedPassRatio: 0.3,
          reason: "passes 3 of 10 checks (30%) on the untouched repository",
        },
      ],
    });
  });
});

describe("a row whose failing checks fail only for a missing tool", () => {
  const goMissing = "FileNotFoundError: [Errno 2] No such file or directory: 'go'";
  const failures = (messages: string[]) =>
    messages.map((message, index) => ({ name: `test_${index}`, message }));

  it("says how many checks need the tool, in the text table and the JSON", () => {
    const check = withToolNeeds(
      classify(
        skill,
        requirement,
        measured(
          run({
            passed: 2,
            total: 5,
            passRatio: 0.4,
            failures: failures([goMissing, goMissing, goMissing]),
          }),
        ),
        noKeywords,
        0.5,
      ),
      ["go"],
    );
    expect(check.status).toBe("ok");
    expect(check.toolNeeds).toEqual([{ tool: "go", checks: 3 }]);
    expect(check.reason).toMatch(/^3 checks need go, which is not installed here/);
    const suite = {
      format: "skillsmith-check/1" as const,
      weakThreshold: 0.5,
      requirements: [check],
      environments: [],
      durationMs: 1,
    };
    expect(renderCheckText(suite)[1]).toMatch(/ok, 3 checks need go/);
    expect(checkJson(suite).requirements[0]?.toolNeeds).toEqual([{ tool: "go", checks: 3 }]);
  });

  it("leaves the row alone when one failing check fails for something else", () => {
    const check = withToolNeeds(
      classify(
        skill,
        requirement,
        measured(
          run({
            passed: 3,
            total: 5,
            passRatio: 0.6,
            failures: failures([goMissing, "AssertionError: no retry policy"]),
          }),
        ),
        noKeywords,
        0.5,
      ),
      ["go"],
    );
    expect(check.status).toBe("weak");
    expect(check.toolNeeds).toBeUndefined();
    expect(
      checkJson({
        format: "skillsmith-check/1",
        weakThreshold: 0.5,
        requirements: [check],
        environments: [],
        durationMs: 1,
      }).requirements[0],
    ).not.toHaveProperty("toolNeeds");
  });
});
