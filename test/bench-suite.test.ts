import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSuite, type SuiteProblem, validateSuite } from "../src/bench/index.js";
import { InputError } from "../src/core/errors.js";
import { runInProcess, writeTree } from "./support/cli.js";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-bench-suite-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const skillMarkdown = (name: string) =>
  `---\nname: ${name}\ndescription: Helps write greeting functions; use when asked to greet users.\n---\n# ${name}\n\nWrite greetings.\n`;

const requirementMarkdown = [
  "## Background",
  "A tiny greeting library.",
  "## Requirement",
  "Add `greet(name)` returning `Hello, <name>!`.",
  "## File Operations",
  "- `greet.py` (create)",
  "## Acceptance Criteria",
  "- `greet('Ada')` returns `Hello, Ada!`",
  "",
].join("\n");

const runValidate = (suite: string, json: boolean) =>
  runInProcess(["bench", "validate-suite", suite, ...(json ? ["--json"] : [])], {
    cwd: scratch,
    env: {},
  });

describe("validateSuite on a hand-made suite with many problems", () => {
  let suite: string;
  let problems: SuiteProblem[];
  beforeAll(async () => {
    suite = join(scratch, "broken");
    await writeTree(suite, {
      "suite.yaml": [
        "format: skillsmith-suite/1", // 1
        "name: broken", // 2
        "configurations:", // 3
        "  - id: base", // 4
        "    agent: claude-code", // 5
        "    limits: { timeoutSeconds: 600 }", // 6
        "  - id: base", // 7  duplicate id
        "    agent: gpt", // 8  not an agent kind
        "    limits:", // 9
        "      timeoutSeconds: -5", // 10 not positive
        "colour: blue", // 11 unknown field
        "",
      ].join("\n"),
      // alpha: two repository sources, a branch name as commit, no Agent Skills folder, a
      // requirement without acceptance criteria, a verifier whose file is missing.
      "skills/alpha/skill.yaml": [
        "repository:", // 1
        "  url: https://example.com/alpha.git", // 2
        "  path: ../elsewhere", // 3
        "  commit: main", // 4
        "",
      ].join("\n"),
      "skills/alpha/requirements/r1/requirement.md":
        "## Background\nx\n## Requirement\nDo it.\n## File Operations\n- `a.py`\n",
      "skills/alpha/requirements/r1/verifier.yaml":
        "command: python -m pytest test_r1.py\nfiles: [test_r1.py]\n",
      // beta: no skill.yaml, no requirements.
      "skills/beta/agent-skills/beta/SKILL.md": skillMarkdown("beta"),
      // gamma: a duplicate key, and a skill whose name does not match its folder.
      "skills/gamma/skill.yaml": [
        "environment:", // 1
        "  image: python:3.12", // 2
        "environment:", // 3 duplicate
        "  image: python:3.13", // 4
        "",
      ].join("\n"),
      "skills/gamma/agent-skills/gamma/SKILL.md": skillMarkdown("not-gamma"),
      "skills/gamma/requirements/r1/requirement.md": requirementMarkdown,
      "skills/gamma/requirements/r1/verifier.yaml": [
        "command: python -m pytest test_r1.py", // 1
        "files: [test_r1.py]", // 2
        "timeoutSeconds: soon", // 3 not a number
        "",
      ].join("\n"),
      "skills/gamma/requirements/r1/verifier/test_r1.py": "def test_x():\n    pass\n",
      "skills/gamma/requirements/r1/solution.patch": "",
      // delta: a commit of digits only, which YAML reads as a number.
      "skills/delta/skill.yaml": [
        "repository:", // 1
        "  url: https://example.com/delta.git", // 2
        "  commit: 1234567", // 3
        "",
      ].join("\n"),
    });
    problems = (await validateSuite(suite)).problems;
  });

  /** `relative/path:line message-fragment`, compared against hand-written expectations. */
  const has = (path: string, line: number | undefined, fragment: RegExp) =>
    problems.some(
      (problem) =>
        relative(suite, problem.path) === path &&
        problem.line === line &&
        fragment.test(problem.message) &&
        problem.severity === "error",
    );

  it("reports every problem of suite.yaml with its line", () => {
    expect(has("suite.yaml", 8, /claude-code/)).toBe(true);
    expect(has("suite.yaml", 10, /[Tt]oo small|>0|positive/)).toBe(true);
    expect(has("suite.yaml", 11, /unknown field "colour"/)).toBe(true);
    expect(has("suite.yaml", 7, /configuration id "base" is used twice/)).toBe(true);
  });

  it("reports every problem of every skill, in the same pass", () => {
    expect(has("skills/alpha/skill.yaml", 1, /exactly one of url, path or bundle/)).toBe(true);
    expect(has("skills/alpha/skill.yaml", 4, /commit hash/)).toBe(true);
    expect(has("skills/delta/skill.yaml", 3, /read this one as a number, so quote it/)).toBe(true);
    expect(has("skills/alpha/agent-skills", undefined, /^no skill/)).toBe(true);
    expect(
      has(
        "skills/alpha/requirements/r1/requirement.md",
        undefined,
        /missing section "Acceptance Criteria"/,
      ),
    ).toBe(true);
    expect(has("skills/alpha/requirements/r1/verifier/test_r1.py", undefined, /^no verifier/)).toBe(
      true,
    );
    expect(has("skills/beta/skill.yaml", undefined, /missing skill\.yaml/)).toBe(true);
    expect(has("skills/beta/requirements", undefined, /no requirements/)).toBe(true);
    expect(has("skills/gamma/skill.yaml", 3, /unique/)).toBe(true);
    expect(
      has("skills/gamma/agent-skills/gamma/SKILL.md", 2, /does not match the folder name/),
    ).toBe(true);
    expect(has("skills/gamma/requirements/r1/verifier.yaml", 3, /number/)).toBe(true);
    expect(has("skills/gamma/requirements/r1/solution.patch", undefined, /empty/)).toBe(true);
  });

  it("loadSuite throws one InputError naming every error", async () => {
    const errors = problems.filter((problem) => problem.severity === "error");
    expect(errors.length).toBeGreaterThanOrEqual(15);
    const failure = await loadSuite(suite).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(InputError);
    const message = (failure as InputError).message;
    expect(message).toContain(`has ${errors.length} problems and cannot run`);
    expect(message).toContain(
      `${join(suite, "suite.yaml")}:11 field "colour": unknown field "colour"`,
    );
    expect(message).toContain(join(suite, "skills", "beta", "skill.yaml"));
  });

  it("validate-suite prints them with file:line and exits 1; --json lists them all", async () => {
    const text = await runValidate(suite, false);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(
      `${join(suite, "skills", "alpha", "skill.yaml")}:4 field "repository.commit"`,
    );
    expect(text.stdout).toMatch(/\d+ errors, \d+ warnings?: the suite cannot run/);
    const json = await runValidate(suite, true);
    expect(json.code).toBe(1);
    const parsed = JSON.parse(json.stdout) as { valid: boolean; problems: SuiteProblem[] };
    expect(parsed.valid).toBe(false);
    expect(parsed.problems).toEqual(problems);
  });
});

describe("a valid hand-made suite", () => {
  it("loads into a typed Suite with repository, verifier and reference solution", async () => {
    const suite = join(scratch, "valid");
    const repository = join(scratch, "greeting-repo");
    await mkdir(repository, { recursive: true });
    await writeTree(suite, {
      "suite.yaml": [
        "format: skillsmith-suite/1",
        "name: greetings",
        "configurations:",
        "  - id: sonnet",
        "    agent: claude-code",
        "    model: anthropic:claude-sonnet-4-5",
        "    limits: { timeoutSeconds: 900, memoryMb: 4096, cpus: 2, maxTurns: 40 }",
        "  - id: replay",
        "    agent: replay",
        "    limits: { timeoutSeconds: 60 }",
        "",
      ].join("\n"),
      "skills/greeter/skill.yaml": [
        "repository:",
        `  path: ${relative(join(suite, "skills", "greeter"), repository)}`,
        "  commit: 0123456789abcdef0123456789abcdef01234567",
        "  setup: ['pip install -e .']",
        "agentLimits: { timeoutSeconds: 600 }",
        "",
      ].join("\n"),
      "skills/greeter/agent-skills/greeter/SKILL.md": skillMarkdown("greeter"),
      "skills/greeter/requirements/r1/requirement.md": requirementMarkdown,
      "skills/greeter/requirements/r1/verifier.yaml":
        "command: python -m pytest test_greet.py --junitxml=junit.xml\nfiles: [test_greet.py]\njunit: junit.xml\n",
      "skills/greeter/requirements/r1/verifier/test_greet.py":
        "def test_greet():\n    from greet import greet\n    assert greet('Ada') == 'Hello, Ada!'\n",
      "skills/greeter/requirements/r1/solution.patch":
        "--- /dev/null\n+++ b/greet.py\n@@ -0,0 +1,2 @@\n+def greet(name):\n+    return f'Hello, {name}!'\n",
    });

    const validation = await validateSuite(suite);
    expect(validation.problems).toEqual([]);
    const loaded = await loadSuite(suite);
    expect(loaded.name).toBe("greetings");
    expect(loaded.configurations.map((configuration) => configuration.id)).toEqual([
      "sonnet",
      "replay",
    ]);
    const skill = loaded.skills[0];
    expect(skill?.repository).toEqual({
      source: { kind: "path", path: repository },
      commit: "0123456789abcdef0123456789abcdef01234567",
      name: "greeting-repo",
      setup: ["pip install -e ."],
      setupChoice: { kind: "commands", commands: ["pip install -e ."] },
      mountPath: "/workspace/greeting-repo",
    });
    expect(skill?.agentLimits).toEqual({ timeoutSeconds: 600 });
    const requirement = skill?.requirements[0];
    expect(requirement?.acceptanceCriteria).toEqual(["`greet('Ada')` returns `Hello, Ada!`"]);
    expect(requirement?.verifier).toMatchObject({
      files: ["test_greet.py"],
      mountPath: "/verifier",
      cwd: "/verifier",
      junit: "junit.xml",
    });
    expect(requirement?.solution).toEqual({
      kind: "patch",
      path: join(suite, "skills", "greeter", "requirements", "r1", "solution.patch"),
    });
  });

  it("rejects a verifier mounted inside the repository (the agent would see it)", async () => {
    const suite = join(scratch, "overlap");
    await writeTree(suite, {
      "suite.yaml":
        "format: skillsmith-suite/1\nname: o\nconfigurations:\n  - { id: c, agent: none, limits: { timeoutSeconds: 5 } }\n",
      "skills/s/skill.yaml": "repository:\n  url: https://example.com/app.git\n  commit: abcdef1\n",
      "skills/s/agent-skills/s/SKILL.md": skillMarkdown("s"),
      "skills/s/requirements/r/requirement.md": requirementMarkdown,
      "skills/s/requirements/r/verifier.yaml":
        "command: pytest\nfiles: [t.py]\nmountPath: /workspace/app/tests\n",
      "skills/s/requirements/r/verifier/t.py": "",
    });
    const { problems, valid } = await validateSuite(suite);
    expect(valid).toBe(false);
    expect(problems.map((problem) => problem.message)).toEqual([
      "verifier mount path /workspace/app/tests overlaps the repository at /workspace/app; verifiers live outside the repository so the agent never sees them",
    ]);
  });

  it("reports a missing suite folder instead of throwing", async () => {
    const result = await validateSuite(join(scratch, "no-such-suite"));
    expect(result.valid).toBe(false);
    expect(result.problems).toEqual([
      {
        path: join(scratch, "no-such-suite"),
        message: "suite folder does not exist",
        severity: "error",
      },
    ]);
  });
});
