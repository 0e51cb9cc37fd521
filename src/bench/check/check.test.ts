import { describe, expect, it } from "vitest";
import type { SuiteRequirement, SuiteSkill } from "../suite/types.js";
import {
  classify,
  type VerifierMeasurement,
  withInstallScripts,
  withToolNeeds,
  withUnservedTestInstalls,
} from "./check.js";
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

describe("a row whose single tests install at test time and cannot here", () => {
  // Failure messages as measured on pypa/packaging's v1 python-packaging batch6 with setup
  // offline (the check's cache of that run): six tests fail in their setup's `pip install -e .`,
  // five for files the task asks for.
  const pipFailed = (test: string) =>
    `Failed: ${test} setup failed: ERROR: Exception: Traceback (most recent call last):   File "/usr/lib/python3/dist-packages/pip/_internal/cli/base_command.py", line 160, in exc_logging_wrapper`;
  const missing = (test: string) =>
    `AssertionError: Missing: src/version_inspector/cli.py (${test}) assert False`;
  const failing = (pip: string[], other: string[]) => [
    ...other.map((name) => ({ name: `test_v.T::${name}`, message: missing(name) })),
    ...pip.map((name) => ({ name: `test_v.T::${name}`, message: pipFailed(name) })),
  ];
  const scan =
    "needs network at test time: test_v.py:171 runs `pip install -e .`; setup ran offline";
  const weighed = (passed: number, total: number, failures: ReturnType<typeof failing>) =>
    withUnservedTestInstalls(
      classify(
        skill,
        requirement,
        measured(run({ passed, total, passRatio: passed / total, failures })),
        { keywordOnly: [], testCount: total },
        0.5,
      ),
      scan,
      0.5,
    );

  it("stays ok and counts the checks the install decides, naming them and where the scan found it", () => {
    const pip = [
      "test_parse",
      "test_validate",
      "test_compare",
      "test_bump",
      "test_order",
      "test_pre",
    ];
    const other = ["test_cli", "test_group", "test_sub", "test_entry", "test_regex"];
    // 1 of 12 passes: of the 6 checks not bound to the install, 1 passes (17%), below 50%.
    const check = weighed(1, 12, failing(pip, other));
    expect(check.status).toBe("ok");
    expect(check.reason).toMatch(/^passes 1 of 12 checks/);
    expect(check.reason).toContain(
      "6 of the 12 checks fail for a test-time install that cannot run here (test_parse, test_validate, test_compare and 3 more",
    );
    expect(check.reason).toContain("test_v.py:171 runs `pip install -e .`");
  });

  it("is weak when the checks that can pass here already pass from the threshold", () => {
    // 5 of 12 pass (42%, ok by the ratio alone), but 4 fail for the install: 5 of the 8 others.
    const check = weighed(
      5,
      12,
      failing(["test_a", "test_b", "test_c", "test_d"], ["test_e", "test_f", "test_g"]),
    );
    expect(check.status).toBe("weak");
    expect(check.untouchedPassRatio).toBeCloseTo(5 / 12, 10);
    expect(check.reason).toMatch(/^already passes 5 of the 8 checks that can pass here \(62\.5%\)/);
  });

  it("is broken when every failing check fails for the install: no agent can change the score", () => {
    const check = weighed(2, 5, failing(["test_a", "test_b", "test_c"], []));
    expect(check.status).toBe("broken");
    expect(check.reason).toMatch(
      /^needs network at test time: every failing check fails for its install/,
    );
    expect(check.reason).toContain("3 of the 5 checks");
  });

  it("adds nothing when no failing check shows the installer failing, or the scan found no install", () => {
    const noPip = classify(
      skill,
      requirement,
      measured(
        run({ passed: 1, total: 3, passRatio: 1 / 3, failures: failing([], ["test_a", "test_b"]) }),
      ),
      noKeywords,
      0.5,
    );
    expect(withUnservedTestInstalls(noPip, scan, 0.5)).toBe(noPip);
    const withPip = classify(
      skill,
      requirement,
      measured(
        run({ passed: 1, total: 3, passRatio: 1 / 3, failures: failing(["test_a"], ["test_b"]) }),
      ),
      noKeywords,
      0.5,
    );
    expect(withUnservedTestInstalls(withPip, undefined, 0.5)).toBe(withPip);
  });
});

describe("withInstallScripts", () => {
  // v1's mcp-builder helper, as the scan reads it: `npm ci` in a function the tests call.
  const files = [
    {
      path: "_dependency_utils.py",
      content:
        "import subprocess\ndef ensure_npm_dependencies(repo_dir):\n    subprocess.run(['npm', 'ci', '--legacy-peer-deps'], cwd=repo_dir)\n",
    },
    {
      path: "test_mcp_builder.py",
      content:
        "from _dependency_utils import ensure_npm_dependencies\ndef test_a():\n    ensure_npm_dependencies('/workspace/servers')\n",
    },
  ];
  const scripts = [
    "src/everything/package.json: prepare `npm run build`",
    "src/filesystem/package.json: prepare `npm run build`",
    "src/memory/package.json: prepare `npm run build`",
    "src/sequentialthinking/package.json: prepare `npm run build`",
  ];
  const caches = [
    {
      installer: "npm" as const,
      path: "/skillsmith-env/npm-cache",
      installs: [
        {
          installer: "npm" as const,
          command: "npm ci --legacy-peer-deps",
          served: "setup" as const,
          scripts,
        },
      ],
    },
  ];
  const timedOut = classify(
    skill,
    requirement,
    measured(run({ total: 0, timedOut: true, exitCode: null, durationMs: 300_000 })),
    noKeywords,
    0.5,
  );

  it("names the lifecycle scripts a timed-out verifier's npm ci reran, with where it runs", () => {
    const check = withInstallScripts(timedOut, files, caches);
    expect(check.status).toBe("broken");
    expect(check.reason).toMatch(
      /^the verifier timed out on the untouched repository after 300 s; its test-time `npm ci --legacy-peer-deps` \(_dependency_utils\.py:3\) reruns the repository's lifecycle scripts/,
    );
    expect(check.reason).toContain(
      "src/everything/package.json: prepare `npm run build`, src/filesystem/package.json: prepare `npm run build`, src/memory/package.json: prepare `npm run build` and 1 more",
    );
  });

  it("adds nothing to a run that finished, or when the install runs no scripts", () => {
    const finished = classify(
      skill,
      requirement,
      measured(run({ passed: 10, total: 10, passRatio: 1 })),
      noKeywords,
      0.5,
    );
    expect(withInstallScripts(finished, files, caches)).toBe(finished);
    const noScripts = [
      { ...caches[0], installs: [{ ...caches[0]?.installs[0], scripts: undefined }] },
    ] as unknown as typeof caches;
    expect(withInstallScripts(timedOut, files, noScripts)).toBe(timedOut);
  });
});
